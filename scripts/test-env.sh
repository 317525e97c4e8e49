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
if [ -n "${ANYSQS_TEST_POSTGRES_DSN:-}" ]; then
	echo "export ANYSQS_TEST_POSTGRES_DSN='${ANYSQS_TEST_POSTGRES_DSN}'"
elif pg_ready 127.0.0.1 5432; then
	echo "export ANYSQS_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'"
else
	# A cluster installed but stopped: start it. Otherwise a throwaway cluster from the binaries.
	if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql/*/main >/dev/null 2>&1; then
		v=$(ls /etc/postgresql | head -n1)
		as_root pg_ctlcluster --skip-systemctl-redirect "$v" main start >/dev/null 2>&1 || true
		for _ in $(seq 1 30); do pg_ready 127.0.0.1 5432 && break; sleep 0.5; done
	fi
	if pg_ready 127.0.0.1 5432; then
		echo "export ANYSQS_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'"
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
			owner=postgres
			id postgres >/dev/null 2>&1 || owner=$(id -un)
			chown "$owner" "$dir" 2>/dev/null || true
			run() { if [ "$(id -un)" = "$owner" ]; then "$@"; else su "$owner" -s /bin/sh -c "$(printf '%q ' "$@")"; fi; }
			if run "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null 2>&1 &&
				run "$bin/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" -w start >/dev/null 2>&1; then
				say "started a throwaway PostgreSQL on 127.0.0.1:$port (data in $dir)"
				echo "export ANYSQS_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
			else
				missing+=("PostgreSQL (could not start a throwaway cluster from $bin)")
			fi
		else
			missing+=("PostgreSQL (no server running on 127.0.0.1:5432 and no binaries to start one)")
		fi
	fi
fi

if [ ${#missing[@]} -gt 0 ]; then
	for m in "${missing[@]}"; do say "MISSING: $m — its tests will be skipped and reported as not run"; done
	if [ "${CI:-}" = true ]; then
		say "CI=true: missing services are an error"
		echo "exit 1"
	fi
fi
