#!/usr/bin/env bash
# The cost of the driver plugin boundary (make bench-plugin; docs/performance.md, "Driver
# plugins"), on the local PostgreSQL, in one session:
#  1. anysqs-load's driver path against its driver-plugin path: the PostgreSQL driver in
#     process and the same driver behind `anysqs driver serve postgres`, taking turns in
#     one run, closed loop at batch 1 and 10;
#  2. two gateways on one scratch database, one with the postgres backend, one with the
#     plugin backend serving postgres, driven in turn by anysqs-load's gateway path.
# Extra arguments go to every anysqs-load run (default: --rounds 3 --duration 5s).
set -euo pipefail
cd "$(dirname "$0")/.."

server=${ANYSQS_TEST_POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
db="anysqs_bench_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
dsn=$(printf '%s' "$server" | sed -E "s#/[^/?]*(\?|$)#/$db\1#")
work=$(mktemp -d)
pids=()

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	psql "$server" -qAt -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/anysqs" ./cmd/anysqs
go build -o "$work/anysqs-load" ./cmd/anysqs-load
psql "$server" -qAt -c "CREATE DATABASE $db" >/dev/null
sum=$(sha256sum "$work/anysqs" | cut -d' ' -f1)
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--rounds 3 --duration 5s)

echo "## driver in process against driver plugin (one anysqs-load run per batch size)"
for batch in 1 10; do
	"$work/anysqs-load" --mode closed --paths driver,driver-plugin --plugin "$work/anysqs" \
		--dsn "$dsn" --schema direct --batch "$batch" "${args[@]}"
done

# start_gateway NAME BACKEND-YAML: starts anysqs serve, sets addr and pid.
start_gateway() {
	cat >"$work/$1.yaml"
	"$work/anysqs" serve --config "$work/$1.yaml" 2>"$work/$1.log" &
	pid=$!
	pids+=("$pid")
	addr=
	for _ in $(seq 1 100); do
		addr=$(sed -nE 's/.*anysqs listening.* addr=([^ ]+).*/\1/p' "$work/$1.log" | head -n1)
		[ -n "$addr" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$work/$1.log" >&2; exit 1; }
		sleep 0.1
	done
	[ -n "$addr" ] || { echo "bench-plugin: gateway $1 did not start" >&2; cat "$work/$1.log" >&2; exit 1; }
}
start_gateway inproc <<EOF2
listen: 127.0.0.1:0
backend: {name: postgres, options: {dsn: "$dsn", schema: inproc}}
EOF2
in_addr=$addr in_pid=$pid
start_gateway plugin <<EOF2
listen: 127.0.0.1:0
backend:
  name: plugin
  options:
    path: $work/anysqs
    args: [driver, serve, postgres]
    checksum: sha256:$sum
    config: {dsn: "$dsn", schema: plugin}
EOF2
pl_addr=$addr pl_pid=$pid

echo "## gateway with the postgres backend against gateway with the plugin backend (turns)"
for batch in 1 10; do
	for round in 1 2 3; do
		for gw in in pl; do
			a=${gw}_addr p=${gw}_pid schema=$([ $gw = in ] && echo inproc || echo plugin)
			echo "### batch $batch, round $round, $([ $gw = in ] && echo in-process || echo plugin)"
			"$work/anysqs-load" --mode closed --paths gateway --endpoint "http://${!a}" --gateway-pid "${!p}" \
				--dsn "$dsn" --schema "$schema" --batch "$batch" "${args[@]}" --rounds 1 | grep -E '^\| Standard'
		done
	done
done
