#!/usr/bin/env bash
# Runs the anysqs image (make image) with podman and checks it from the outside, on
# loopback only:
#   sqlite    the image's own configuration with a named volume on /data: the AWS CLI
#             (Query protocol) creates a queue, sends and receives; the process is not
#             root; /healthz and /readyz answer; a message outlives a container restart.
#   postgres  the same image on the local PostgreSQL (127.0.0.1:5432, trust auth) by
#             ANYSQS_BACKEND and ANYSQS_BACKEND_OPTIONS, with --network host.
#
#   scripts/image-test.sh [sqlite|postgres]...     (make image-test; default: both)
#
# IMAGE (default localhost/anysqs:latest) is the image; PODMAN_RUN_FLAGS, when set, replaces
# the flags probed for below; PG_DSN_BASE (default postgres://postgres@127.0.0.1:5432) the server.
set -euo pipefail

image=${IMAGE:-localhost/anysqs:latest}
aws=${AWSCLI:-/usr/bin/aws}
key=AKIDIMAGETEST secret=image-test-secret
run_id=anysqs-imagetest-$$
port=${IMAGE_TEST_PORT:-19324} admin_port=${IMAGE_TEST_ADMIN_PORT:-19325}
pg_base=${PG_DSN_BASE:-postgres://postgres@127.0.0.1:5432}
pg_db=anysqs_imagetest

say() { echo "image-test: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
for tool in podman curl "$aws"; do
	command -v "$tool" >/dev/null || fail "needs $tool"
done
podman image exists "$image" || fail "no image $image: run make image first"

# Some hosts need flags for podman to start a container at all. This sandbox, for one:
# crun 1.8 refuses its hybrid cgroup v1/v2 layout ("cgroups in hybrid mode not
# supported") and root may not raise rlimits above its own, while podman asks for
# nofile=1048576; runc with the host's limits works. Take the first set that runs.
pick_run_flags() {
	if [ -n "${PODMAN_RUN_FLAGS+x}" ]; then
		echo "$PODMAN_RUN_FLAGS"
		return
	fi
	local nofile nproc candidates=("")
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	# conmon, which starts the runtime, ran with 32768 processes here: more is refused.
	if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
	candidates+=("--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc")
	command -v runc >/dev/null && candidates+=("--runtime runc --ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc")
	local flags err
	for flags in "${candidates[@]}"; do
		# shellcheck disable=SC2086 # flags are words
		if err=$(podman run --rm $flags "$image" version 2>&1); then
			say "podman run flags: ${flags:-(none)}; $err"
			echo "$flags"
			return
		fi
		say "podman run ${flags:+$flags }failed: $err"
	done
	fail "podman cannot run a container here (errors above)"
}
run_flags=$(pick_run_flags)

cleanup() {
	podman rm -f -v -t 0 "$run_id" >/dev/null 2>&1 || true
	podman volume rm -f "$run_id" >/dev/null 2>&1 || true
}
on_exit() {
	local status=$?
	if [ $status != 0 ]; then
		podman logs --tail 20 "$run_id" 2>/dev/null | sed 's/^/image-test: container: /' >&2 || true
	fi
	cleanup
}
trap on_exit EXIT

export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_DEFAULT_REGION=us-east-1 AWS_PAGER=
endpoint=http://127.0.0.1:$port
sqs() { "$aws" --endpoint-url "$endpoint" --output text sqs "$@"; }

# wait_ready polls /readyz for up to 30 s (the container starts in well under a second).
wait_ready() {
	for _ in $(seq 1 60); do
		curl -fsS -m 2 "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1 && return 0
		if [ "$(podman inspect -f '{{.State.Running}}' "$run_id" 2>/dev/null)" != true ]; then
			podman logs "$run_id" >&2 || true
			fail "the container exited"
		fi
		sleep 0.5
	done
	podman logs "$run_id" >&2 || true
	fail "/readyz did not answer within 30 s"
}

check_probes() {
	local p body
	for p in healthz readyz; do
		body=$(curl -fsS -m 5 "http://127.0.0.1:$admin_port/$p") || fail "/$p did not answer 200"
		say "/$p: 200 $body"
	done
}

# check_user: the gateway's process runs as 65532, read from the host's /proc (the image
# has no shell or id to exec).
check_user() {
	local pid uid
	pid=$(podman inspect -f '{{.State.Pid}}' "$run_id")
	uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
	[ "$uid" = 65532 ] || fail "the gateway runs as uid $uid, want 65532"
	say "gateway process $pid runs as uid $uid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
}

# round_trip QUEUE BODY: create the queue, send BODY, receive it and delete it.
round_trip() {
	local url got
	url=$(sqs create-queue --queue-name "$1" --query QueueUrl)
	sqs send-message --queue-url "$url" --message-body "$2" --query MessageId >/dev/null
	got=$(sqs receive-message --queue-url "$url" --wait-time-seconds 5 --query 'Messages[0].[Body,ReceiptHandle]')
	[ "${got%%$'\t'*}" = "$2" ] || fail "received '$got', want '$2'"
	sqs delete-message --queue-url "$url" --receipt-handle "${got#*$'\t'}"
	say "$1: create-queue, send-message, receive-message, delete-message: ok ($url)"
}

test_sqlite() {
	say "== sqlite: the image's configuration, a volume on /data, ports published on 127.0.0.1"
	# Safe by default: on 0.0.0.0 without access keys the gateway must refuse to start.
	local out
	# shellcheck disable=SC2086
	if out=$(podman run --rm $run_flags "$image" 2>&1); then
		fail "the image started without ANYSQS_AUTH_CREDENTIALS"
	fi
	grep -q 'auth lists no credentials' <<<"$out" || fail "without credentials: $out"
	say "without ANYSQS_AUTH_CREDENTIALS it refuses to start: ok"
	podman volume create "$run_id" >/dev/null
	# shellcheck disable=SC2086
	podman run -d --name "$run_id" $run_flags -v "$run_id:/data" \
		-e ANYSQS_AUTH_CREDENTIALS="$key:$secret" \
		-p "127.0.0.1:$port:9324" -p "127.0.0.1:$admin_port:9325" "$image" >/dev/null
	wait_ready
	check_probes
	check_user
	round_trip orders '{"id":1}'
	local url
	url=$(sqs get-queue-url --queue-name orders --query QueueUrl)
	sqs send-message --queue-url "$url" --message-body kept-across-restart --query MessageId >/dev/null
	local t0=$SECONDS
	podman restart -t 30 "$run_id" >/dev/null
	wait_ready
	say "restarted the container (SIGTERM, drain, start) in $((SECONDS - t0)) s"
	local got
	got=$(sqs receive-message --queue-url "$url" --wait-time-seconds 5 --query 'Messages[0].Body')
	[ "$got" = kept-across-restart ] || fail "after the restart received '$got', want kept-across-restart"
	say "after the restart the volume still held the queue and the message: ok"
	say "volume: $(podman volume inspect -f '{{.Mountpoint}}' "$run_id" | xargs ls -n | awk 'NR > 1 {printf "%s %s:%s %s; ", $1, $3, $4, $9}')"
	cleanup
}

test_postgres() {
	say "== postgres: ANYSQS_BACKEND=postgres, database $pg_db on $pg_base, --network host, loopback listeners"
	command -v psql >/dev/null || fail "needs psql"
	PGOPTIONS=--client-min-messages=warning psql "$pg_base/postgres" -qAtc "DROP DATABASE IF EXISTS $pg_db" ||
		fail "no PostgreSQL with trust authentication at $pg_base"
	# shellcheck disable=SC2086
	podman run -d --name "$run_id" $run_flags --network host \
		-e ANYSQS_LISTEN="127.0.0.1:$port" -e ANYSQS_ADMIN_LISTEN="127.0.0.1:$admin_port" \
		-e ANYSQS_AUTH_CREDENTIALS="$key:$secret" \
		-e ANYSQS_BACKEND=postgres \
		-e ANYSQS_BACKEND_OPTIONS="{dsn: '$pg_base/$pg_db?sslmode=disable', create_database: true, schema: anysqs}" \
		"$image" >/dev/null
	wait_ready
	check_probes
	check_user
	round_trip orders-pg hello-postgres
	say "tables in $pg_db: $(psql "$pg_base/$pg_db" -qAtc "SELECT count(*) FROM pg_tables WHERE schemaname = 'anysqs'")"
	cleanup
	PGOPTIONS=--client-min-messages=warning psql "$pg_base/postgres" -qAtc "DROP DATABASE IF EXISTS $pg_db"
}

for t in "${@:-sqlite postgres}"; do
	for one in $t; do
		case $one in
		sqlite) test_sqlite ;;
		postgres) test_postgres ;;
		*) fail "unknown test $one (sqlite, postgres)" ;;
		esac
	done
done
say "PASS"
