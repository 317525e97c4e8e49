#!/usr/bin/env bash
# The Cloud Firestore emulator of the conformance suite's firestore row.
#
#   scripts/services/firestore.sh start   find or start the emulator; print its env lines
#   scripts/services/firestore.sh env     print the env lines of a running emulator only
#   scripts/services/firestore.sh stop    stop the emulator `start` started, if any
#
# Env lines are `export FIRESTORE_EMULATOR_HOST=...` and the emulator's version
# (ANYSQS_FIRESTORE_EMULATOR_VERSION, which names the report's target) on stdout, for eval.
# Tests and configs/firestore.yaml name their project themselves. The emulator comes with the Google Cloud CLI (its component
# cloud-firestore-emulator, Java 11 or later); when it is missing, start says how to
# install it on stderr and exits 1.
set -uo pipefail

say() { echo "firestore.sh: $*" >&2; }
host=127.0.0.1
port=${ANYSQS_FIRESTORE_EMULATOR_PORT:-8687}
state=/tmp/anysqs-firestore-emulator-$port.pid # per port: two emulators never share one
log=/tmp/anysqs-firestore-emulator-$port.log

ready() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }

env_lines() {
	if [ -n "${FIRESTORE_EMULATOR_HOST:-}" ]; then
		echo "export FIRESTORE_EMULATOR_HOST='$FIRESTORE_EMULATOR_HOST'"
	elif ready; then
		echo "export FIRESTORE_EMULATOR_HOST='$host:$port'"
	else
		return 1
	fi
	# The version names the target in the compatibility report.
	if emu=$(find_emulator) && v=$("$emu" --version 2>/dev/null | head -n1 | awk '{print $NF}') && [ -n "$v" ]; then
		echo "export ANYSQS_FIRESTORE_EMULATOR_VERSION='$v'"
	fi
}

find_emulator() {
	for e in "${ANYSQS_FIRESTORE_EMULATOR:-}" \
		/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud_firestore_emulator \
		"$(command -v gcloud >/dev/null && dirname "$(readlink -f "$(command -v gcloud)")")/../platform/cloud-firestore-emulator/cloud_firestore_emulator"; do
		[ -n "$e" ] && [ -x "$e" ] && { echo "$e"; return 0; }
	done
	return 1
}

start() {
	env_lines && return 0
	if ! emu=$(find_emulator); then
		say "no Firestore emulator found. Install the Google Cloud CLI and its emulator:"
		say "  Debian/Ubuntu (Google's apt repository): apt-get install google-cloud-cli google-cloud-cli-firestore-emulator default-jre-headless"
		say "  elsewhere: gcloud components install cloud-firestore-emulator   (needs Java 11+)"
		say "or point ANYSQS_FIRESTORE_EMULATOR at cloud_firestore_emulator, or FIRESTORE_EMULATOR_HOST at a running one"
		return 1
	fi
	if ! command -v java >/dev/null; then
		say "the emulator at $emu needs Java 11 or later (apt-get install default-jre-headless)"
		return 1
	fi
	# Own session, so that stop ends the emulator's JVM with its wrapper script.
	setsid "$emu" start --host="$host" --port="$port" >"$log" 2>&1 </dev/null &
	echo $! >"$state"
	for _ in $(seq 1 120); do
		ready && break
		kill -0 "$(cat "$state")" 2>/dev/null || break
		sleep 0.25
	done
	if ! ready; then
		say "the emulator did not start on $host:$port (see $log)"
		stop
		return 1
	fi
	say "started the Firestore emulator on $host:$port ($("$emu" --version 2>/dev/null | head -n1); log $log)"
	env_lines
}

stop() {
	[ -f "$state" ] || return 0
	pid=$(cat "$state")
	kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
	rm -f "$state"
}

case "${1:-}" in
start) start ;;
env) env_lines || { say "no Firestore emulator is running on $host:$port"; exit 1; } ;;
stop) stop ;;
*) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
