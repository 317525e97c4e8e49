#!/usr/bin/env bash
# The PostgreSQL churn soak (make soak-postgres; not part of make test): full send →
# receive → delete cycles through the gateway at the highest rate the machine sustains,
# 15 minutes: 5 as they are, 5 with a transaction held open on another connection (it
# holds back the xmin horizon: no vacuum removes the rows deleted meanwhile), 5 after it
# is rolled back. One row a minute: throughput, receive p50/p99, and the messages table's
# and indexes' sizes with live and dead tuples (anysqs-load --mode churn, churn.go).
#
#   scripts/soak-postgres.sh [--vacuum-on-sweep] [anysqs-load flags]
#   scripts/soak-postgres.sh --duration 3m --hold-from 1m --hold-for 1m --interval 30s
#
# It creates a scratch database on the local PostgreSQL (ANYSQS_TEST_POSTGRES_DSN, else
# scripts/services/postgres.sh finds or starts one), serves it with a gateway configured
# as configs/postgres.yaml, and drops it at the end. The server's settings are reported,
# never changed: where autovacuum is off, dead rows are removed only with
# --vacuum-on-sweep (the backend option vacuum_on_sweep: VACUUM after every 30 s sweep).
# --json FILE keeps the rows. Output: Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bench.sh

vacuum_on_sweep=false
args=()
for a in "$@"; do
	case $a in
	--vacuum-on-sweep) vacuum_on_sweep=true ;;
	*) args+=("$a") ;;
	esac
done

if [ -z "${ANYSQS_TEST_POSTGRES_DSN:-}" ]; then
	eval "$(scripts/services/postgres.sh start)" || { echo "soak-postgres: no PostgreSQL server" >&2; exit 1; }
fi
server=$ANYSQS_TEST_POSTGRES_DSN
schema=anysqs
work=$(mktemp -d)
gw_pid=
db=

cleanup() {
	if [ -n "$gw_pid" ]; then kill "$gw_pid" 2>/dev/null || true; wait "$gw_pid" 2>/dev/null || true; fi
	[ -n "$db" ] && psql "$server" -qAtX -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

echo "soak-postgres: building the gateway (SQLite and PostgreSQL only) and anysqs-load" >&2
CGO_ENABLED=0 go build -trimpath -tags anysqs_lite -o "$work/anysqs" ./cmd/anysqs
CGO_ENABLED=0 go build -trimpath -o "$work/anysqs-load" ./cmd/anysqs-load
scratch=$(scratch_database anysqs_soak) || { echo "soak-postgres: could not create a database on $server" >&2; exit 1; }
db=$(sed -n 1p <<<"$scratch") dsn=$(sed -n 2p <<<"$scratch")

# The gateway as configs/postgres.yaml configures it, on the scratch database, any free port.
sed -E -e 's#^listen: .*#listen: 127.0.0.1:0#' \
	-e "s#^( +)dsn: .*#\\1dsn: \"$dsn\"#" \
	-e "s#^( +)schema: [^ ]+#\\1schema: $schema#" \
	-e "s#^( +)create_database: .*#&\\n\\1vacuum_on_sweep: $vacuum_on_sweep#" \
	configs/postgres.yaml >"$work/anysqs.yaml"
grep -q "dsn: \"$dsn\"" "$work/anysqs.yaml" && grep -q "vacuum_on_sweep: $vacuum_on_sweep" "$work/anysqs.yaml" ||
	{ echo "soak-postgres: configs/postgres.yaml has changed shape; update this script's sed" >&2; exit 1; }
serve_gateway "$work/anysqs" "$work/anysqs.yaml" "$work/gateway.log" ||
	{ echo "soak-postgres: gateway did not start" >&2; exit 1; }

# --- Header: what the result depends on --------------------------------------------------
setting() { psql "$dsn" -qAtX -c "SELECT setting || coalesce(unit, '') FROM pg_settings WHERE name = '$1'"; }
autovacuum=$(setting autovacuum)
echo "## PostgreSQL churn soak, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "- anysqs $(git describe --tags --always --dirty 2>/dev/null || echo dev), gateway pid $gw_pid on $addr (configs/postgres.yaml, vacuum_on_sweep: $vacuum_on_sweep), $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
echo "- PostgreSQL $(setting server_version) at ${server%%\?*}, scratch database $db, schema $schema"
echo "- server settings that decide the result (reported, not changed):"
psql "$dsn" -qAtX -F ' = ' -c "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name IN
	('autovacuum', 'track_counts', 'autovacuum_naptime', 'autovacuum_max_workers', 'autovacuum_vacuum_cost_delay',
	 'autovacuum_vacuum_cost_limit', 'idle_in_transaction_session_timeout', 'transaction_timeout',
	 'old_snapshot_threshold', 'hot_standby_feedback', 'vacuum_defer_cleanup_age', 'shared_buffers',
	 'maintenance_work_mem', 'synchronous_commit', 'fsync') ORDER BY name" | sed 's/^/  - /'
echo "- the messages table's own storage parameters: $(psql "$dsn" -qAtX -c "SELECT array_to_string(reloptions, ', ') FROM pg_class WHERE oid = '$schema.messages'::regclass")"
if [ "$autovacuum" != on ] || [ "$(setting track_counts)" != on ]; then
	if [ "$vacuum_on_sweep" = true ]; then
		echo "- autovacuum is off: the table's storage parameters do nothing; the gateway vacuums after every sweep (vacuum_on_sweep)"
	else
		echo "- autovacuum is off: the table's storage parameters do nothing and nothing removes dead rows, held transaction or not (--vacuum-on-sweep: the gateway vacuums after every sweep)"
	fi
fi
idle=$(psql "$dsn" -qAtX -c "SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'")
[ "${idle:-0}" = 0 ] || echo "- idle_in_transaction_session_timeout is ${idle} ms: a held transaction longer than that is ended by the server (the rows say so)"
echo

"$work/anysqs-load" --mode churn --endpoint "http://$addr" --dsn "$dsn" --schema "$schema" ${args[@]+"${args[@]}"}

warns=$(grep -c 'level=WARN\|level=ERROR' "$work/gateway.log" || true)
echo "gateway log: $warns warnings and errors$([ "$warns" = 0 ] || printf '; the first:\n%s' "$(grep -m3 'level=WARN\|level=ERROR' "$work/gateway.log")")"
