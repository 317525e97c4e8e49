#!/usr/bin/env bash
# The project's test command (`make test`): set up what tests need, lint, then test
# every package. Slow soak and load runs are separate targets.
set -euo pipefail
cd "$(dirname "$0")/.."

# stage NAME starts a stage; each stage's wall time is printed as the run ends, passed or
# failed, so that the budget (10 minutes of testing on 2 cores) can be watched.
started=$(date +%s)
stage_name=setup
stage_start=$started
stage_times=""
stage() {
	local now
	now=$(date +%s)
	stage_times+=$(printf '  %5ss  %s' $((now - stage_start)) "$stage_name")$'\n'
	stage_name=$1
	stage_start=$now
	echo "== $1"
}
report_times() {
	stage done >/dev/null
	echo "== stage times (wall)"
	printf '%s' "$stage_times"
	echo "  $(($(date +%s) - started))s in all"
}

# Every test process (and the compiler) collects garbage at the GOGC anysqs serve uses by
# default: the run is CPU-bound on 2 cores, and memory is plentiful.
export GOGC=${GOGC:-400}

env_lines=$(scripts/test-env.sh)
eval "$env_lines"
out=$(mktemp -d)
# Whatever the outcome, stop what test-env.sh started (PgBouncers, throwaway servers).
trap 'report_times; rm -rf "$out"; scripts/test-env.sh stop' EXIT

# Every run creates and drops hundreds of schemas on the test server. Without autovacuum
# (this image's server has it off) their catalog rows stay dead, and each run's DDL gets
# slower than the last: vacuum the catalogs first. Failing to is reported, not fatal.
if [ -n "${ANYSQS_TEST_POSTGRES_DSN:-}" ] && command -v psql >/dev/null &&
	[ "$(psql "$ANYSQS_TEST_POSTGRES_DSN" -Atc 'show autovacuum' 2>/dev/null)" = off ]; then
	stage "vacuum the test server's catalogs (its autovacuum is off)"
	psql "$ANYSQS_TEST_POSTGRES_DSN" -qc "VACUUM pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_depend,
		pg_catalog.pg_type, pg_catalog.pg_index, pg_catalog.pg_constraint, pg_catalog.pg_namespace,
		pg_catalog.pg_attrdef, pg_catalog.pg_sequence, pg_catalog.pg_description, pg_catalog.pg_shdepend,
		pg_catalog.pg_trigger, pg_catalog.pg_init_privs" ||
		echo "test-env: could not vacuum the catalogs of $ANYSQS_TEST_POSTGRES_DSN; tests go on"
fi

stage "generated files are current"
# Compare the tree's state before and after generating, so uncommitted work of a
# developer's own does not trip the check; on CI's clean clone this is git diff.
before=$(git status --porcelain=v1 -uall -- . | sort; git diff -- . | sha256sum)
go generate ./...
after=$(git status --porcelain=v1 -uall -- . | sort; git diff -- . | sha256sum)
if [ "$before" != "$after" ]; then
	git status --short -- .
	echo "go generate changed the tree: generated files are stale; run make generate and commit the result"
	exit 1
fi

stage "gofmt"
# gofmt -l lists the files whose formatting differs; any is a failure, as in make lint.
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "$unformatted"
	echo "gofmt: the files above need formatting; run gofmt -w on them"
	exit 1
fi

stage "go vet"
go vet ./...

stage "staticcheck"
scripts/staticcheck.sh ./...

stage "build the binary the served tests start (internal/servetest)"
CGO_ENABLED=0 go build -o "$out/anysqs" ./cmd/anysqs
export ANYSQS_TEST_BINARY=$out/anysqs

stage "go test, with the conformance suite -> compatibility reports beside it"
# The conformance suite (TestConformance, run by the report generator) and several
# packages spend most of their time waiting on real clocks, emulators and child
# processes, not on the CPU: running the two side by side overlaps those waits. The
# report's output is shown after go test's. testsum prints each package's ok/FAIL line,
# failed tests in full, the slowest tests, and "N passed, N failed, N skipped".
#
# The served rows of the emulated backends (the emulator behind a process per case, the
# most CPU of any rows) run in `make test-served-emulators` instead: their in-process rows
# run here, and cmd/anysqs's TestServeShippedConfigs serves each of them from its
# shipped configuration.
(
	report_start=$(date +%s)
	status=0
	go run ./cmd/anysqs report --quiet --out "$out/compat" --check docs/compat \
		--skip "$(scripts/served-emulators.sh)" || status=$?
	echo "(the conformance suite and reports took $(($(date +%s) - report_start))s)"
	exit $status
) >"$out/report.log" 2>&1 &
report_pid=$!
go_status=0
go test -json -count=1 -timeout 12m -skip '^TestConformance$' ./... | go run ./internal/testsum || go_status=$?
report_status=0
wait $report_pid || report_status=$?
echo "== conformance suite -> compatibility reports, compared with docs/compat"
cat "$out/report.log"
if [ $go_status -ne 0 ] || [ $report_status -ne 0 ]; then
	exit 1
fi

stage "examples/counting-plugin: a third-party driver plugin, its own module"
(cd examples/counting-plugin && go vet ./... && go test -count=1 ./...)

stage "deploy/kubernetes/check: the manifests' schema check, its own module (run by cmd/anysqs's tests)"
(cd deploy/kubernetes/check && go vet ./...)
