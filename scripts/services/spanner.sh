#!/usr/bin/env bash
# The Cloud Spanner emulator of the conformance suite's spanner row.
#
#   scripts/services/spanner.sh start   find or start an emulator; print its env lines
#   scripts/services/spanner.sh env     print the env lines of a running emulator only
#   scripts/services/spanner.sh stop    stop the emulator `start` started, if any
#
# Env lines, for eval: `export SPANNER_EMULATOR_HOST=127.0.0.1:9010` (the Spanner client
# and the driver read it) and `export ANYSQS_TEST_SPANNER_EMULATOR_VERSION=...` (the
# report's target). When no emulator can be had, start and env say why on stderr and
# exit 1; the caller decides whether that skips the backend's tests or (CI=true) fails.
set -uo pipefail

say() { echo "spanner.sh: $*" >&2; }
host=${ANYSQS_TEST_SPANNER_HOST:-127.0.0.1}
port=${ANYSQS_TEST_SPANNER_PORT:-9010}
state=/tmp/anysqs-spanner.current # "<pid> <port>" of the emulator start started

ready() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# sdk_root finds the google-cloud-cli installation holding the emulator binary.
sdk_root() {
	local d
	for d in ${CLOUDSDK_ROOT_DIR:-} /usr/lib/google-cloud-sdk /usr/share/google-cloud-sdk /opt/google-cloud-sdk \
		"$HOME/google-cloud-sdk" "$(command -v gcloud >/dev/null && gcloud info --format='value(installation.sdk_root)' 2>/dev/null)"; do
		[ -n "$d" ] && [ -x "$d/bin/cloud_spanner_emulator/emulator_main" ] && { echo "$d"; return 0; }
	done
	return 1
}

# version reads the emulator component's version from the SDK's install records.
version() {
	local root f
	root=$(sdk_root) || { echo unknown; return; }
	for f in "$root"/.install/cloud-spanner-emulator*.snapshot.json; do
		[ -f "$f" ] || continue
		v=$(grep -o '"version_string": *"[^"]*"' "$f" | head -n1 | sed 's/.*"\([^"]*\)"$/\1/')
		[ -n "$v" ] && { echo "$v"; return; }
	done
	echo unknown
}

env_lines() {
	local h=${SPANNER_EMULATOR_HOST:-$host:$port}
	ready "${h%:*}" "${h##*:}" || return 1
	echo "export SPANNER_EMULATOR_HOST=$h"
	echo "export ANYSQS_TEST_SPANNER_EMULATOR_VERSION=$(version)"
}

start() {
	env_lines && return 0
	root=$(sdk_root)
	if [ -z "$root" ]; then
		say "the Cloud Spanner emulator is not installed. Install Google's google-cloud-cli with its" \
			"emulator: on Debian/Ubuntu, add Google's apt repository (https://cloud.google.com/sdk/docs/install#deb)" \
			"and 'apt-get install google-cloud-cli-spanner-emulator'; elsewhere 'gcloud components install" \
			"cloud-spanner-emulator'. Or run one yourself and set SPANNER_EMULATOR_HOST."
		return 1
	fi
	log=$(mktemp /tmp/anysqs-spanner.XXXXXX.log)
	nohup "$root/bin/cloud_spanner_emulator/emulator_main" --host_port "$host:$port" >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 1 50); do ready "$host" "$port" && break; sleep 0.1; done
	if ! ready "$host" "$port"; then
		say "the emulator did not start on $host:$port (see $log)"
		kill "$pid" 2>/dev/null
		return 1
	fi
	echo "$pid $port" >"$state"
	say "started the Cloud Spanner emulator $(version) on $host:$port (pid $pid, log $log)"
	SPANNER_EMULATOR_HOST=$host:$port env_lines
}

stop() {
	[ -f "$state" ] || return 0
	read -r pid _ <"$state"
	kill "$pid" 2>/dev/null || true
	rm -f "$state"
}

case "${1:-}" in
start) start ;;
env) env_lines || { say "no Cloud Spanner emulator is running on ${SPANNER_EMULATOR_HOST:-$host:$port}"; exit 1; } ;;
stop) stop ;;
*) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
