#!/usr/bin/env bash
# The Cosmos DB emulators of the conformance suite's cosmos row and the driver's tests.
#
#   scripts/services/cosmos.sh start   find or start the emulators; print their env lines
#   scripts/services/cosmos.sh env     print the env lines of running emulators only
#   scripts/services/cosmos.sh stop    stop the emulators `start` started, if any
#
# The row runs on @vercel/cosmosdb-server 1.0.1 (npm), on https://127.0.0.1:3000/: it
# honours If-Match, which the driver's claims rest on. cosmium v0.1.20 (Go module proxy)
# is started too when it can be built, on https://127.0.0.1:8081/, for the driver's
# wire-format test only: its queries answer the driver's filters wrongly. Both use
# self-signed certificates; the tests skip verification for them only.
#
# Env lines are `export ANYSQS_TEST_COSMOS_...='...'` on stdout, for eval. When the row's
# emulator cannot be had, start and env say why on stderr and exit 1.
set -uo pipefail

say() { echo "cosmos.sh: $*" >&2; }
cache=${ANYSQS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anysqs}
server_dir=$cache/cosmosdb-server-1.0.1
cosmium_bin=$cache/cosmium-0.1.20/cosmium
state=/tmp/anysqs-cosmos.pids # pids start started, one per line
port=3000 cosmium_port=8081

ready() { curl -skf --max-time 2 "https://127.0.0.1:$1/" >/dev/null 2>&1; }

env_lines() {
	ready $port || return 1
	echo "export ANYSQS_TEST_COSMOS_ENDPOINT='https://127.0.0.1:$port/'"
	# cosmosdb-server answers 500 for a missing item: read those with a query.
	echo "export ANYSQS_TEST_COSMOS_QUERY_READS='1'"
	# ... and reads a batch's partition key from each operation, not the header.
	echo "export ANYSQS_TEST_COSMOS_BATCH_PARTITION_KEYS='1'"
	echo "export ANYSQS_TEST_COSMOS_TARGET='@vercel/cosmosdb-server 1.0.1 (partial emulator)'"
	if ready $cosmium_port; then
		echo "export ANYSQS_TEST_COSMIUM_ENDPOINT='https://127.0.0.1:$cosmium_port/'"
	fi
}

start_server() {
	ready $port && return 0
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		say "node and npm are needed for @vercel/cosmosdb-server (Debian: apt-get install nodejs npm)"
		return 1
	fi
	if [ ! -f "$server_dir/node_modules/@vercel/cosmosdb-server/lib/cli.js" ]; then
		say "installing @vercel/cosmosdb-server@1.0.1 from npm into $server_dir"
		mkdir -p "$server_dir"
		if ! npm install --prefix "$server_dir" --no-audit --no-fund --silent @vercel/cosmosdb-server@1.0.1 >&2; then
			say "npm install @vercel/cosmosdb-server@1.0.1 failed"
			return 1
		fi
	fi
	nohup node "$server_dir/node_modules/@vercel/cosmosdb-server/lib/cli.js" --host 127.0.0.1 -p $port \
		>"$cache/cosmosdb-server.log" 2>&1 &
	echo $! >>"$state"
	for _ in $(seq 1 40); do ready $port && return 0; sleep 0.25; done
	say "cosmosdb-server did not answer on 127.0.0.1:$port (see $cache/cosmosdb-server.log)"
	return 1
}

# start_cosmium builds cosmium from a module of its own (outside anysqs's go.mod) and
# starts it; failing is not fatal, only its test is then not run.
start_cosmium() {
	ready $cosmium_port && return 0
	if [ ! -x "$cosmium_bin" ]; then
		command -v go >/dev/null || { say "no go: cosmium not built (its test is not run)"; return 0; }
		mod=$(mktemp -d)
		printf 'module cosmiumbuild\n\ngo 1.22\n\nrequire github.com/pikami/cosmium v0.1.20\n' >"$mod/go.mod"
		printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/pikami/cosmium/cmd/server"\n' >"$mod/tools.go"
		say "building cosmium v0.1.20 from the Go module proxy"
		if ! (cd "$mod" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 &&
			mkdir -p "$(dirname "$cosmium_bin")" && go build -o "$cosmium_bin" github.com/pikami/cosmium/cmd/server) >&2; then
			say "cosmium did not build (its test is not run)"
			rm -rf "$mod"
			return 0
		fi
		rm -rf "$mod"
	fi
	nohup "$cosmium_bin" -Host 127.0.0.1 -Port $cosmium_port -DisableAuth -LogLevel error >"$cache/cosmium.log" 2>&1 &
	echo $! >>"$state"
	for _ in $(seq 1 40); do ready $cosmium_port && return 0; sleep 0.25; done
	say "cosmium did not answer on 127.0.0.1:$cosmium_port (see $cache/cosmium.log; its test is not run)"
}

start() {
	mkdir -p "$cache"
	if ! command -v curl >/dev/null; then
		say "curl is needed to check the emulators"
		return 1
	fi
	start_server || return 1
	start_cosmium
	env_lines
}

stop() {
	[ -f "$state" ] || return 0
	while read -r pid; do
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done <"$state"
	rm -f "$state"
}

case "${1:-}" in
start) start ;;
env) env_lines || { say "no Cosmos DB emulator is running on 127.0.0.1:$port"; exit 1; } ;;
stop) stop ;;
*) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
