#!/usr/bin/env bash
# Prepares what the test suite needs on this machine and prints `export` lines for it.
# It installs or starts what is missing where it can, and says plainly what it could not.
# Under CI (CI=true) a missing service is an error; elsewhere the tests of that backend
# are skipped and reported as not run.
#
#   eval "$(scripts/test-env.sh)"
set -uo pipefail

say() { echo "test-env: $*" >&2; }
missing=()

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi
}

# PostgreSQL and PgBouncer refuse to run as root: as root, they run as postgres.
svc_user=$(id -un)
[ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && svc_user=postgres
as_svc() { if [ "$(id -un)" = "$svc_user" ]; then "$@"; else su "$svc_user" -s /bin/sh -c "$(printf '%q ' "$@")"; fi; }

apt_install() {
	command -v apt-get >/dev/null || return 1
	if [ ! -f /tmp/.anysqs-apt-updated ]; then
		as_root apt-get update -qq >/dev/null 2>&1 && touch /tmp/.anysqs-apt-updated
	fi
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

# --- The AWS CLI v2 from Debian (speaks the Query protocol) -------------------------------
if [ ! -x /usr/bin/aws ]; then
	say "installing Debian's awscli for the Query-protocol tests"
	apt_install awscli || true
fi
if [ -x /usr/bin/aws ]; then
	echo "export ANYSQS_TEST_AWSCLI=/usr/bin/aws"
else
	missing+=("AWS CLI (/usr/bin/aws, Debian package awscli)")
fi

# --- boto3 for Debian's python3 (Query protocol, botocore 1.29) ---------------------------
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import boto3' 2>/dev/null; then
	apt_install python3-boto3 || true
fi

# --- PostgreSQL ---------------------------------------------------------------------------
pg_ready() { pg_isready -q -h "$1" -p "$2" 2>/dev/null || (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
pg_dsn=
if [ -n "${ANYSQS_TEST_POSTGRES_DSN:-}" ]; then
	pg_dsn=$ANYSQS_TEST_POSTGRES_DSN
elif pg_ready 127.0.0.1 5432; then
	pg_dsn='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
else
	# A cluster installed but stopped: start it. Otherwise a throwaway cluster from the binaries.
	if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql/*/main >/dev/null 2>&1; then
		v=$(ls /etc/postgresql | head -n1)
		as_root pg_ctlcluster --skip-systemctl-redirect "$v" main start >/dev/null 2>&1 || true
		for _ in $(seq 1 30); do pg_ready 127.0.0.1 5432 && break; sleep 0.5; done
	fi
	if pg_ready 127.0.0.1 5432; then
		pg_dsn='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
	else
		bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
		if [ -z "$bin" ]; then
			say "no PostgreSQL found; installing Debian's postgresql for the tests"
			apt_install postgresql || true
			bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
		fi
		if [ -n "$bin" ]; then
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
				pg_dsn="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
			else
				missing+=("PostgreSQL (could not start a throwaway cluster from $bin)")
			fi
		else
			missing+=("PostgreSQL (no server running on 127.0.0.1:5432 and no binaries to start one)")
		fi
	fi
fi
[ -n "$pg_dsn" ] && echo "export ANYSQS_TEST_POSTGRES_DSN='$pg_dsn'"

# --- PgBouncer in front of that PostgreSQL, in session and in transaction pooling -----------
# The driver must work through session pooling and refuse transaction pooling when it opens.
# Set up only for a passwordless postgres://USER@HOST:PORT/... server (the local or throwaway one).
if [ -n "$pg_dsn" ]; then
	if [[ "$pg_dsn" =~ ^postgres(ql)?://([A-Za-z0-9_]+)@([0-9.]+|localhost):([0-9]+)/ ]]; then
		pg_user=${BASH_REMATCH[2]} pg_host=${BASH_REMATCH[3]} pg_port=${BASH_REMATCH[4]}
		bouncer=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null)
		if [ -z "$bouncer" ]; then
			say "installing Debian's pgbouncer for the connection-pooler tests"
			apt_install pgbouncer || true
			bouncer=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null)
		fi
		if [ -n "$bouncer" ]; then
			for mode in session transaction; do
				port=$([ $mode = session ] && echo 64321 || echo 64322)
				dir=/tmp/anysqs-pgbouncer-$pg_port-$mode
				if ! { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }; then
					mkdir -p "$dir"
					printf '"%s" ""\n' "$pg_user" >"$dir/users"
					printf '%s\n' "[databases]" "* = host=$pg_host port=$pg_port" "[pgbouncer]" \
						"listen_addr = 127.0.0.1" "listen_port = $port" "unix_socket_dir =" \
						"auth_type = trust" "auth_file = $dir/users" "pool_mode = $mode" \
						"max_client_conn = 1000" "default_pool_size = 40" \
						"logfile = $dir/log" "pidfile = $dir/pid" >"$dir/ini"
					chown -R "$svc_user" "$dir" 2>/dev/null || true
					as_svc "$bouncer" -d "$dir/ini" >/dev/null 2>&1
					for _ in $(seq 1 20); do pg_ready 127.0.0.1 "$port" && break; sleep 0.25; done
				fi
				if pg_ready 127.0.0.1 "$port"; then
					var=ANYSQS_TEST_PGBOUNCER_$(echo "$mode" | tr a-z A-Z)_DSN
					echo "export $var='postgres://$pg_user@127.0.0.1:$port/postgres?sslmode=disable'"
				else
					missing+=("PgBouncer in $mode pooling (did not start; see $dir/log)")
				fi
			done
		else
			missing+=("PgBouncer (/usr/sbin/pgbouncer, Debian package pgbouncer)")
		fi
	else
		say "ANYSQS_TEST_POSTGRES_DSN is not a passwordless local server: the PgBouncer tests will be skipped"
	fi
fi

if [ ${#missing[@]} -gt 0 ]; then
	for m in "${missing[@]}"; do say "MISSING: $m — its tests will be skipped and reported as not run"; done
	if [ "${CI:-}" = true ]; then
		say "CI=true: missing services are an error"
		echo "exit 1"
	fi
fi
