#!/usr/bin/env bash
# The PostgreSQL service of the conformance suite's postgres row.
#
#   scripts/services/postgres.sh start   find or start a server; print its env lines
#   scripts/services/postgres.sh env     print the env lines of a running server only
#   scripts/services/postgres.sh stop    stop the throwaway server `start` created, if any
#
# Env lines are `export ANYSQS_TEST_POSTGRES_DSN='...'` on stdout, for eval. When no server
# can be had, start and env say why on stderr and exit 1; the caller decides whether
# that skips the backend's tests or (CI=true) fails the run.
set -uo pipefail
. "$(dirname "$0")/../lib/privileges.sh"

say() { echo "postgres.sh: $*" >&2; }
local_dsn='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
# The throwaway cluster start created, so that stop finds it: "<bin dir> <data dir>".
state=/tmp/anysqs-pg.current

env_lines() {
	if [ -n "${ANYSQS_TEST_POSTGRES_DSN:-}" ]; then
		echo "export ANYSQS_TEST_POSTGRES_DSN='$ANYSQS_TEST_POSTGRES_DSN'"
	elif pg_ready 127.0.0.1 5432; then
		echo "export ANYSQS_TEST_POSTGRES_DSN='$local_dsn'"
	elif [ -f "$state" ] && read -r _ dir port <"$state" && pg_ready 127.0.0.1 "$port"; then
		echo "export ANYSQS_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
	else
		return 1
	fi
}

start() {
	env_lines && return 0
	# A cluster installed but stopped: start it. Otherwise a throwaway cluster from the binaries.
	if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql/*/main >/dev/null 2>&1; then
		v=$(ls /etc/postgresql | head -n1)
		as_root pg_ctlcluster --skip-systemctl-redirect "$v" main start >/dev/null 2>&1 || true
		for _ in $(seq 1 30); do pg_ready 127.0.0.1 5432 && break; sleep 0.5; done
		env_lines && return 0
	fi
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
	if [ -z "$bin" ]; then
		say "no PostgreSQL found; installing Debian's postgresql for the tests"
		apt_install postgresql || true
		bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
	fi
	if [ -z "$bin" ]; then
		say "no server running on 127.0.0.1:5432 and no binaries to start one"
		return 1
	fi
	dir=$(mktemp -d /tmp/anysqs-pg.XXXXXX)
	port=54329
	chown "$svc_user" "$dir" 2>/dev/null || true
	# TLS with a self-signed certificate for localhost, so that the TLS test runs here too.
	tls=
	if command -v openssl >/dev/null && openssl req -new -x509 -days 30 -nodes -subj /CN=localhost \
		-addext subjectAltName=DNS:localhost -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1; then
		chmod 600 "$dir/server.key"
		chown "$svc_user" "$dir/server.key" "$dir/server.crt" 2>/dev/null || true
		tls="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
	fi
	if as_svc "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null 2>&1 &&
		as_svc "$bin/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $tls" -l "$dir/log" -w start >/dev/null 2>&1; then
		say "started a throwaway PostgreSQL on 127.0.0.1:$port (data in $dir)"
		echo "$bin $dir $port" >"$state"
		echo "export ANYSQS_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
		return 0
	fi
	say "could not start a throwaway cluster from $bin (see $dir/log)"
	return 1
}

stop() {
	[ -f "$state" ] || return 0
	read -r bin dir _ <"$state"
	as_svc "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -f "$state"
}

case "${1:-}" in
start) start ;;
env) env_lines || { say "no PostgreSQL is running"; exit 1; } ;;
stop) stop ;;
*) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
