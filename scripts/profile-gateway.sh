#!/usr/bin/env bash
# Takes a CPU profile of the gateway under closed-loop load: starts an anysqs binary on
# one backend with --pprof on loopback, runs anysqs-load against it and saves the
# profile that the gateway recorded meanwhile, with its top entries beside it.
#
#   scripts/profile-gateway.sh [-b ANYSQS] [-l ANYSQS_LOAD] [-o DIR] BACKEND [anysqs-load flags]
#
# BACKEND is sqlite (durable, in a fresh directory), sqlite-memory or postgres (a fresh
# database on $ANYSQS_TEST_POSTGRES_DSN's server, dropped at the end). The load defaults
# to 16 workers, batch 1, 4 s of warm-up and 20 s profiled; flags after BACKEND override
# them (--batch 10). Writes DIR/BACKEND.pprof and DIR/BACKEND.top (default ./profile-out).
set -euo pipefail
cd "$(dirname "$0")/.."
bin= loadbin= out=profile-out
while getopts b:l:o: opt; do
	case $opt in
	b) bin=$OPTARG ;;
	l) loadbin=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
backend=${1:?usage: $0 [-b ANYSQS] [-l ANYSQS_LOAD] [-o DIR] sqlite|sqlite-memory|postgres [anysqs-load flags]}
shift
work=$(mktemp -d)
gw= db=
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null && wait "$gw" 2>/dev/null
	[ -n "$db" ] && psql "$ANYSQS_TEST_POSTGRES_DSN" -qAt -c "DROP DATABASE IF EXISTS $db" >/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$bin" ]; then
	go build -o "$work/anysqs" ./cmd/anysqs
	bin=$work/anysqs
fi
if [ -z "$loadbin" ]; then
	go build -o "$work/anysqs-load" ./cmd/anysqs-load
	loadbin=$work/anysqs-load
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
pport=$(free_port)
case $backend in
sqlite) opts="data_dir: $work/data" ;;
sqlite-memory) opts='data_dir: ":memory:"' ;;
postgres)
	: "${ANYSQS_TEST_POSTGRES_DSN:?postgres needs ANYSQS_TEST_POSTGRES_DSN (eval \"\$(scripts/test-env.sh)\")}"
	db="anysqs_profile_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
	psql "$ANYSQS_TEST_POSTGRES_DSN" -qAt -c "CREATE DATABASE $db" >/dev/null
	dsn=$(printf '%s' "$ANYSQS_TEST_POSTGRES_DSN" | sed -E "s#/[^/?]*(\?|$)#/$db\1#")
	opts="dsn: \"$dsn\""
	backend_name=postgres ;;
*) echo "unknown backend $backend" >&2; exit 2 ;;
esac
printf 'listen: 127.0.0.1:%s\nlog_level: warn\nbackend:\n  name: %s\n  options:\n    %s\n' \
	"$port" "${backend_name:-sqlite}" "$opts" >"$work/config.yaml"
"$bin" serve --config "$work/config.yaml" --pprof "127.0.0.1:$pport" &
gw=$!
for _ in $(seq 100); do
	curl -fs -o /dev/null "http://127.0.0.1:$pport/debug/pprof/" && break
	sleep 0.1
done
mkdir -p "$out"
"$loadbin" --mode closed --paths gateway --endpoint "http://127.0.0.1:$port" --gateway-pid "$gw" \
	--workers 16 --batch 1 --warmup 4s --duration 22s "$@" >"$work/load.txt" &
load=$!
sleep 5 # past the warm-up and the first second of the measured phase
curl -fs -o "$out/$backend.pprof" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=20"
wait "$load"
cat "$work/load.txt"
go tool pprof -top -nodecount=40 "$out/$backend.pprof" 2>/dev/null >"$out/$backend.top"
echo "wrote $out/$backend.pprof and $out/$backend.top"
