#!/usr/bin/env bash
# Measures anysqs against the SQS servers people run in its place, in one run on this
# machine: builds or installs each peer the package registries offer, starts every server
# on loopback only, runs `anysqs-load --mode peers` on all of them in turn (interleaved
# rounds, medians), and writes results.md, results.json and latency.svg to $OUT
# (default ./bench-peers-out). Extra arguments go to anysqs-load, e.g. --rounds 5.
#
#   scripts/bench-peers.sh [anysqs-load flags]
#
# With VERIFY=1 (make verify-peers) it runs `anysqs verify --endpoint` against each server
# instead of the load, and writes each report to $OUT/verify/<server>/ and a table of how
# many cases each server passes, fails (differs from SQS's documented behaviour) and
# leaves to a gateway clock, to $OUT/verify/README.md.
#
# Servers:
#   anysqs   on SQLite (the default, durable), SQLite :memory:, and PostgreSQL: a
#            throwaway server of its own (initdb/pg_ctl on PATH; autovacuum on, as in
#            production) or else $ANYSQS_TEST_POSTGRES_DSN's (with vacuum_on_sweep
#            where that server's autovacuum is off)
#   goaws    v0.5.4 from the Go module proxy, built in a temporary module outside the
#            repository with its own main listening on 127.0.0.1 (goaws's binds 0.0.0.0)
#   fauxqs, local-aws-sqs   from npm (pinned versions), started by a launcher that binds
#            127.0.0.1 (fauxqs binds 0.0.0.0 by itself)
#   moto     where a python3 with moto's server is installed
#   anysqs on the Spanner and Firestore emulators, when SPANNER_EMULATOR_HOST and
#            FIRESTORE_EMULATOR_HOST are set (make bench-peers sets them): the gateway's CPU
#   floor    anysqs-load --mode floor: net/http and JSON answering without storing
#            anything, the least CPU per call an SQS server on Go can cost here
# PEERS=floor,goaws,anysqs-postgres (say) runs only the servers named.
# A peer whose install fails is left out with a note. Every server is checked to listen
# on loopback addresses only before any load is sent; one that does not is stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
repo=$PWD
out=${OUT:-$repo/bench-peers-out}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/anysqs-bench-peers
work=$(mktemp -d)
mkdir -p "$out" "$cache"
pids=()
pg_data=
scratch_db= # a database created on $ANYSQS_TEST_POSTGRES_DSN's server, dropped at the end

GOAWS_VERSION=v0.5.4
FAUXQS_VERSION=2.4.1
LOCAL_AWS_SQS_VERSION=2.0.2

note() { echo "bench-peers: $*" >&2; }

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$pg_data" ]; then as_pg pg_ctl -D "$pg_data" -m fast stop >/dev/null 2>&1 || true; fi
	if [ -n "$scratch_db" ]; then psql "$ANYSQS_TEST_POSTGRES_DSN" -qAt -c "DROP DATABASE IF EXISTS $scratch_db WITH (FORCE)" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# loopback_only checks that process $1 and its children listen on loopback addresses only.
loopback_only() {
	local all
	all=$(ss -Htlnp | grep -E "pid=($1|$(pgrep -d'|' -P "$1" || echo 0))," | awk '{print $4}')
	[ -n "$all" ] || return 1
	! printf '%s\n' "$all" | grep -vqE '^(127\.[0-9.]+|\[::1\]):[0-9]+$'
}

targets=()
# start NAME PORT CMD...: starts a server, waits for its port, checks it, adds the target.
# With PEERS set (comma-separated names), only those servers start.
start() {
	local name=$1 port=$2
	shift 2
	if [ -n "${PEERS:-}" ] && [[ ",$PEERS," != *",$name,"* ]]; then return 0; fi
	"$@" >"$work/$name.log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	if ! wait_port "$port" "$pid"; then
		note "$name did not start; left out (log below)"
		tail -n 5 "$work/$name.log" >&2
		return 0
	fi
	if ! loopback_only "$pid"; then
		note "$name listens beyond loopback; stopped and left out"
		kill "$pid"
		return 0
	fi
	targets+=(--target "$name=http://127.0.0.1:$port@$pid")
	note "$name on 127.0.0.1:$port, pid $pid"
}

# as_pg runs a PostgreSQL tool as the postgres user when this is root (initdb refuses root).
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

note "building anysqs and anysqs-load"
go build -o "$work/anysqs" ./cmd/anysqs
go build -o "$work/anysqs-load" ./cmd/anysqs-load

# goaws: a main of our own around goaws's router, so that it listens on loopback.
if [ ! -x "$cache/goaws-$GOAWS_VERSION" ]; then
	note "building goaws $GOAWS_VERSION"
	gw="$work/goaws-build"
	mkdir -p "$gw"
	cat >"$gw/main.go" <<'EOF'
// goaws's own main (app/cmd/goaws.go at the same version), listening on 127.0.0.1 only.
package main

import (
	"flag"
	"net/http"
	"time"

	"github.com/Admiral-Piett/goaws/app/conf"
	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/router"
	log "github.com/sirupsen/logrus"
)

func main() {
	config := flag.String("config", "", "goaws config file")
	flag.Parse()
	log.SetLevel(log.WarnLevel)
	ports := conf.LoadYamlConfig(*config, "Local")
	go gosqs.PeriodicTasks(1*time.Second, make(chan bool))
	log.Fatal(http.ListenAndServe("127.0.0.1:"+ports[0], router.New()))
}
EOF
	if (cd "$gw" && go mod init bench-peers/goaws >/dev/null 2>&1 &&
		GOFLAGS=-mod=mod go get "github.com/Admiral-Piett/goaws@$GOAWS_VERSION" >/dev/null 2>&1 &&
		GOFLAGS=-mod=mod go build -o "$cache/goaws-$GOAWS_VERSION" .) >"$work/goaws-build.log" 2>&1; then
		:
	else
		note "goaws build failed; left out"
		tail -n 5 "$work/goaws-build.log" >&2
	fi
fi

# fauxqs and local-aws-sqs from npm.
have_npm=
if command -v npm >/dev/null && command -v node >/dev/null; then
	if [ ! -d "$cache/npm/node_modules/fauxqs" ] || [ ! -d "$cache/npm/node_modules/local-aws-sqs" ]; then
		note "installing fauxqs@$FAUXQS_VERSION and local-aws-sqs@$LOCAL_AWS_SQS_VERSION from npm"
		mkdir -p "$cache/npm"
		(cd "$cache/npm" && npm install --no-audit --no-fund --silent \
			"fauxqs@$FAUXQS_VERSION" "local-aws-sqs@$LOCAL_AWS_SQS_VERSION") >"$work/npm.log" 2>&1 ||
			{ note "npm install failed; those peers left out"; tail -n 5 "$work/npm.log" >&2; }
	fi
	have_npm=1
fi
cat >"$work/fauxqs.mjs" <<EOF
// fauxqs's server bound to 127.0.0.1: it asks for 0.0.0.0 itself.
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] && typeof args[0] === "object") args[0] = { ...args[0], host: "127.0.0.1" };
  return listen.apply(this, args);
};
const { startFauxqs } = await import("$cache/npm/node_modules/fauxqs/dist/app.js");
await startFauxqs({ port: Number(process.env.PORT), logger: false });
EOF
cat >"$work/local-aws-sqs.mjs" <<EOF
const { createSqsServer } = await import("$cache/npm/node_modules/local-aws-sqs/dist/index.js");
await createSqsServer({ port: Number(process.env.PORT), hostname: "127.0.0.1" });
EOF

# PostgreSQL: a throwaway server of our own, else the configured one.
dsn=
pg_pid=
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
	pg_port=$(free_port)
	pg_data="$work/pg"
	mkdir -p "$pg_data"
	[ "$(id -u)" = 0 ] && chown postgres "$work" "$pg_data"
	as_pg initdb -D "$pg_data" -A trust -U postgres >"$work/initdb.log" 2>&1
	as_pg pg_ctl -D "$pg_data" -l "$work/pg.log" -w -o "-c listen_addresses=127.0.0.1 -p $pg_port -c unix_socket_directories=$pg_data -c max_connections=200" start >/dev/null
	pg_pid=$(head -n1 "$pg_data/postmaster.pid")
	dsn="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
	note "PostgreSQL of our own on 127.0.0.1:$pg_port (pid $pg_pid, autovacuum $(psql "$dsn" -Atc 'show autovacuum'))"
elif [ -n "${ANYSQS_TEST_POSTGRES_DSN:-}" ]; then
	scratch=$(scratch_database anysqs_peers)
	scratch_db=${scratch%%$'\n'*} dsn=${scratch#*$'\n'}
	note "PostgreSQL at \$ANYSQS_TEST_POSTGRES_DSN, database $scratch_db (autovacuum $(psql "$dsn" -Atc 'show autovacuum'))"
fi
# Without the server's autovacuum the driver vacuums its tables itself (docs/backends/postgres.md).
vacuum=false
if [ -n "$dsn" ] && [ "$(psql "$dsn" -Atc 'show autovacuum')" = off ]; then vacuum=true; fi

# anysqs on each backend.
anysqs() {
	local name=$1 backend=$2 port
	port=$(free_port)
	printf 'listen: 127.0.0.1:%s\nlog_level: warn\nbackend:\n%s\n' "$port" "$backend" >"$work/$name.yaml"
	start "$name" "$port" "$work/anysqs" serve --config "$work/$name.yaml"
}
mkdir -p "$work/sqlite-data"
anysqs anysqs-sqlite "  name: sqlite
  options:
    data_dir: $work/sqlite-data"
anysqs anysqs-sqlite-memory "  name: sqlite
  options:
    data_dir: \":memory:\""
if [ -n "$dsn" ]; then
	anysqs anysqs-postgres "  name: postgres
  options:
    dsn: \"$dsn\"
    vacuum_on_sweep: $vacuum"
fi

# anysqs on the Google emulators (started by scripts/test-env.sh): the emulator's CPU says
# nothing of the cloud, the gateway's own CPU per call does.
if [ -n "${SPANNER_EMULATOR_HOST:-}" ]; then
	port=$(free_port)
	start anysqs-spanner "$port" env ANYSQS_LISTEN="127.0.0.1:$port" ANYSQS_LOG_LEVEL=warn \
		ANYSQS_BACKEND_OPTIONS="{database: bench$(date +%s)}" "$work/anysqs" serve --config configs/spanner.yaml
else
	note "SPANNER_EMULATOR_HOST is not set; anysqs on Spanner left out (make bench-peers starts the emulator)"
fi
if [ -n "${FIRESTORE_EMULATOR_HOST:-}" ]; then
	port=$(free_port)
	start anysqs-firestore "$port" env ANYSQS_LISTEN="127.0.0.1:$port" ANYSQS_LOG_LEVEL=warn \
		ANYSQS_BACKEND_OPTIONS="{project: anysqs-bench-$(date +%s), emulator_host: $FIRESTORE_EMULATOR_HOST}" \
		"$work/anysqs" serve --config configs/firestore.yaml
else
	note "FIRESTORE_EMULATOR_HOST is not set; anysqs on Firestore left out (make bench-peers starts the emulator)"
fi

# The floor: net/http and JSON with nothing stored, what any SQS server on Go pays per call.
port=$(free_port)
start floor "$port" "$work/anysqs-load" --mode floor --listen "127.0.0.1:$port"
if [ -x "$cache/goaws-$GOAWS_VERSION" ]; then
	port=$(free_port)
	printf 'Local:\n  Host: 127.0.0.1\n  Port: %s\n  Region: us-east-1\n  AccountId: "000000000000"\n  LogToFile: false\n  QueueAttributeDefaults:\n    VisibilityTimeout: 30\n    ReceiveMessageWaitTimeSeconds: 0\n' "$port" >"$work/goaws.yaml"
	start goaws "$port" "$cache/goaws-$GOAWS_VERSION" -config "$work/goaws.yaml"
fi
if [ -n "$have_npm" ] && ! node -e 'require("node:sqlite")' 2>/dev/null; then
	note "fauxqs needs Node.js 22.5 or later (node:sqlite); this machine has $(node --version): left out"
elif [ -n "$have_npm" ] && [ -d "$cache/npm/node_modules/fauxqs" ]; then
	port=$(free_port)
	start fauxqs "$port" env PORT="$port" FAUXQS_LOGGER=false node "$work/fauxqs.mjs"
fi
if [ -n "$have_npm" ] && [ -d "$cache/npm/node_modules/local-aws-sqs" ]; then
	port=$(free_port)
	start local-aws-sqs "$port" env PORT="$port" node "$work/local-aws-sqs.mjs"
fi
if command -v python3 >/dev/null && python3 -c 'import moto.server, flask' 2>/dev/null; then
	port=$(free_port)
	start moto "$port" python3 -m moto.server -H 127.0.0.1 -p "$port"
else
	note "no python3 with moto's server here; moto left out"
fi

[ ${#targets[@]} -gt 0 ] || { note "no server started"; exit 1; }
if [ -n "${VERIFY:-}" ]; then
	mkdir -p "$out/verify"
	table="| server | cases | pass | differ from SQS | need a gateway clock | wall time | still running after |
|---|---|---|---|---|---|---|"
	for t in "${targets[@]}"; do
		[ "$t" = --target ] && continue
		name=${t%%=*} rest=${t#*=}
		url=${rest%@*} pid=${rest##*@}
		[ "$name" = floor ] && continue # answers without storing: not an SQS server
		note "verify --endpoint $url ($name)"
		start_s=$(date +%s)
		"$work/anysqs" verify --endpoint "$url" --name "$name" --report "$out/verify/$name" "$@" >"$out/verify/$name.txt" 2>&1 || true
		count() { grep -E "^$1 +[0-9]+$" "$out/verify/$name.txt" | awk '{print $2}' || true; }
		alive=yes
		kill -0 "$pid" 2>/dev/null || alive="no: it exited during the run"
		table+="
| $name | $(count cases) | $(count pass) | $(count fail) | $(count needs-gateway-clock) | $(($(date +%s) - start_s)) s | $alive |"
	done
	printf '%s\n' "$table" | tee "$out/verify/README.md"
	note "wrote $out/verify/README.md and a report per server"
	exit 0
fi
load=(--mode peers "${targets[@]}" --rounds 3 --duration 5s --warmup 2s
	--json "$out/results.json" --svg "$out/latency.svg")
if [ -n "$dsn" ]; then load+=(--dsn "$dsn"); fi
if [ -n "$pg_pid" ]; then load+=(--postgres-pid "$pg_pid"); fi
note "running: anysqs-load ${load[*]} $*"
"$work/anysqs-load" "${load[@]}" "$@" | tee "$out/results.md"
note "wrote $out/results.md, results.json, latency.svg"
