#!/usr/bin/env bash
# Prepares what the test suite needs on this machine and prints `export` lines for it.
# It installs or starts what is missing where it can, and says plainly what it could not.
# Under CI (CI=true) a missing service is an error; elsewhere the tests of that backend
# are skipped and reported as not run.
#
#   eval "$(scripts/test-env.sh)"
#   scripts/test-env.sh stop   stop what an earlier run started, as listed in
#                              $ANYSQS_TEST_STARTED (make test does this when it ends)
set -uo pipefail

say() { echo "test-env: $*" >&2; }
missing=()
started=() # what this run started, for `stop`: service:NAME and pgbouncer:DIR

. "$(dirname "$0")/lib/privileges.sh"

if [ "${1:-}" = stop ]; then
	for what in ${ANYSQS_TEST_STARTED:-}; do
		case $what in
		service:*)
			"$(dirname "$0")/services/${what#service:}.sh" stop >/dev/null 2>&1 &&
				say "stopped ${what#service:}" ;;
		pgbouncer:*)
			dir=${what#pgbouncer:}
			if [ -f "$dir/pid" ]; then
				pid=$(cat "$dir/pid")
				kill "$pid" 2>/dev/null || as_svc kill "$pid" 2>/dev/null || as_root kill "$pid" 2>/dev/null
				say "stopped PgBouncer $dir (pid $pid)"
			fi ;;
		esac
	done
	exit 0
fi

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

# --- protoc for go generate (drivers/plugin's protocol; the Go plugins are go.mod tools) ---
if ! command -v protoc >/dev/null; then
	say "installing Debian's protobuf-compiler for go generate"
	apt_install protobuf-compiler || true
fi
command -v protoc >/dev/null || missing+=("protoc (Debian package protobuf-compiler): go generate fails without it")

# --- boto3 for Debian's python3 (Query protocol, botocore 1.29) ---------------------------
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import boto3' 2>/dev/null; then
	apt_install python3-boto3 || true
fi

# --- Real client libraries of conformance/clients ------------------------------------------
# Celery on kombu's SQS transport, for Debian's python3: kombu publishes with boto3 and
# receives with pycurl.
celery_check='import celery, boto3, pycurl, kombu.transport.SQS, kombu.asynchronous.http.curl'
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "$celery_check" 2>/dev/null; then
	say "installing Debian's python3-celery, python3-kombu, python3-pycurl for conformance/clients"
	apt_install python3-celery python3-kombu python3-pycurl python3-boto3 || true
fi
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "$celery_check" 2>/dev/null; then
	echo "export ANYSQS_TEST_CELERY_PYTHON=/usr/bin/python3"
else
	missing+=("Celery on kombu's SQS transport (/usr/bin/python3 with Debian's python3-celery, python3-kombu, python3-pycurl, python3-boto3)")
fi

# sqs-consumer and sqs-producer as conformance/clients/js/package-lock.json pins them,
# installed once per lock file into the cache (npm ci; later runs need no network). The
# lock file stays beside node_modules, so the test can tell a stale install.
clients_js=$(dirname "$0")/../conformance/clients/js
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	say "installing Debian's nodejs and npm for conformance/clients"
	apt_install nodejs npm || true
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ] || ! command -v npm >/dev/null; then
	missing+=("node 20 or later with npm, for sqs-consumer and sqs-producer (conformance/clients; node is $(node --version 2>/dev/null || echo missing))")
else
	lock_sum=$(sha256sum "$clients_js/package-lock.json" | cut -c1-16)
	js_dir=${ANYSQS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anysqs}/clients-js-$lock_sum
	if [ ! -f "$js_dir/installed" ]; then
		say "npm ci of conformance/clients/js into $js_dir"
		rm -rf "$js_dir" && mkdir -p "$js_dir" && cp "$clients_js/package.json" "$clients_js/package-lock.json" "$js_dir/" &&
			(cd "$js_dir" && npm ci --prefer-offline --no-audit --no-fund --silent >&2) && touch "$js_dir/installed"
	fi
	if [ -f "$js_dir/installed" ]; then
		echo "export ANYSQS_TEST_CLIENTS_JS='$js_dir/node_modules'"
	else
		missing+=("sqs-consumer and sqs-producer (npm ci of conformance/clients/js into $js_dir failed)")
	fi
fi

# --- helm for the chart's tests (cmd/anysqs TestHelmChart) ----------------------------------
# Debian has no helm package: `go install` the pinned release into the cache (a few
# minutes, once). Not a dependency of the anysqs module: its go.mod stays free of helm.
helm_version=v3.21.4
helm_dir=${ANYSQS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anysqs}/helm-$helm_version
if [ ! -x "$helm_dir/helm" ]; then
	say "go install helm.sh/helm/v3/cmd/helm@$helm_version into $helm_dir (once; a few minutes)"
	mkdir -p "$helm_dir" && GOBIN=$helm_dir GOFLAGS=-buildvcs=false CGO_ENABLED=0 \
		go install "helm.sh/helm/v3/cmd/helm@$helm_version" >&2 || true
fi
if [ -x "$helm_dir/helm" ]; then
	echo "export ANYSQS_TEST_HELM='$helm_dir/helm'"
else
	missing+=("helm $helm_version (go install helm.sh/helm/v3/cmd/helm@$helm_version failed; the chart's tests are skipped)")
fi

# --- promtool for the alert rules' check (cmd/anysqs TestMonitoringFiles) -----------------
# From Debian's prometheus package, unpacked into the cache rather than installed: only
# the promtool binary is wanted, not a Prometheus service.
prom_dir=${ANYSQS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/anysqs}/prometheus-deb
promtool=$(command -v promtool || true)
if [ -z "$promtool" ] && [ ! -x "$prom_dir/usr/bin/promtool" ] && command -v apt-get >/dev/null; then
	say "unpacking promtool from Debian's prometheus package into $prom_dir (once)"
	(mkdir -p "$prom_dir" && cd "$prom_dir" && apt-get download prometheus >&2 2>/dev/null ||
		{ as_root apt-get update -qq >&2 && apt-get download prometheus >&2; } &&
		dpkg -x prometheus_*.deb . && rm -f prometheus_*.deb) || true
fi
[ -z "$promtool" ] && [ -x "$prom_dir/usr/bin/promtool" ] && promtool=$prom_dir/usr/bin/promtool
if [ -n "$promtool" ]; then
	echo "export ANYSQS_TEST_PROMTOOL='$promtool'"
else
	missing+=("promtool (Debian package prometheus; apt-get download failed): the alert rules' check is skipped")
fi

# --- Services of the conformance suite's backend rows: one script each --------------------
for svc in "$(dirname "$0")"/services/*.sh; do
	name=$(basename "$svc" .sh)
	"$svc" env >/dev/null 2>&1 || started+=("service:$name") # not running before: ours to stop
	if lines=$("$svc" start); then
		echo "$lines"
		eval "$lines"
	else
		missing+=("$name (see $svc; its conformance row is skipped)")
	fi
done
pg_dsn=${ANYSQS_TEST_POSTGRES_DSN:-}

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
					started+=("pgbouncer:$dir")
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

echo "export ANYSQS_TEST_STARTED='${started[*]}'"

if [ ${#missing[@]} -gt 0 ]; then
	for m in "${missing[@]}"; do say "MISSING: $m — its tests will be skipped and reported as not run"; done
	if [ "${CI:-}" = true ]; then
		say "CI=true: missing services are an error"
		echo "exit 1"
	fi
fi
