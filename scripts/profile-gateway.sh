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
. scripts/lib/bench.sh
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
	[ -n "$db" ] && psql "$ANYSQS_TEST_POSTGRES_DSN" -qAt -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
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
port=$(free_port)
pport=$(free_port)
case $backend in
sqlite) opts="data_dir: $work/data" ;;
sqlite-memory) opts='data_dir: ":memory:"' ;;
postgres)
	: "${ANYSQS_TEST_POSTGRES_DSN:?postgres needs ANYSQS_TEST_POSTGRES_DSN (eval \"\$(scripts/test-env.sh)\")}"
	scratch=$(scratch_database anysqs_profile)
	db=${scratch%%$'\n'*} dsn=${scratch#*$'\n'}
	opts="dsn: \"$dsn\""
	backend_name=postgres ;;
*) echo "unknown backend $backend" >&2; exit 2 ;;
esac
printf 'listen: 127.0.0.1:%s\nlog_level: warn\nbackend:\n  name: %s\n  options:\n    %s\n' \
	"$port" "${backend_name:-sqlite}" "$opts" >"$work/config.yaml"
"$bin" serve --config "$work/config.yaml" --pprof "127.0.0.1:$pport" &
gw=$!
wait_port "$pport" "$gw" || { echo "the gateway did not start" >&2; exit 1; }
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
