#!/usr/bin/env bash
# Measures the gateway against the same work done without it, in one run, on the local
# PostgreSQL: creates a scratch database, starts `anysqs serve` on it, runs
# `anysqs-load --mode suite` (extra arguments are passed on), then stops the gateway and
# drops the database. Output: Markdown tables on stdout.
#
#   scripts/bench-postgres.sh [anysqs-load flags, e.g. --duration 5s]
#
# The server comes from ANYSQS_TEST_POSTGRES_DSN (scripts/test-env.sh) and defaults to
# postgres://postgres@127.0.0.1:5432/postgres. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bench.sh

server=${ANYSQS_TEST_POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
db="anysqs_bench_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
dsn=$(printf '%s' "$server" | sed -E "s#/[^/?]*(\?|$)#/$db\1#")
work=$(mktemp -d)
gw_pid=

cleanup() {
	if [ -n "$gw_pid" ]; then kill "$gw_pid" 2>/dev/null || true; wait "$gw_pid" 2>/dev/null || true; fi
	psql "$server" -qAt -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/anysqs" ./cmd/anysqs
go build -o "$work/anysqs-load" ./cmd/anysqs-load
psql "$server" -qAt -c "CREATE DATABASE $db" >/dev/null

cat >"$work/anysqs.yaml" <<EOF
listen: 127.0.0.1:0
admin_listen: 127.0.0.1:0
log_level: info
backend:
  name: postgres
  options:
    dsn: "$dsn"
EOF
serve_gateway "$work/anysqs" "$work/anysqs.yaml" "$work/gateway.log" ||
	{ echo "bench-postgres: gateway did not start" >&2; exit 1; }

echo "bench-postgres: gateway pid $gw_pid on $addr, database $db" >&2
"$work/anysqs-load" --mode suite --endpoint "http://$addr" --dsn "$dsn" --gateway-pid "$gw_pid" "$@"
