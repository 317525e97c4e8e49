#!/usr/bin/env bash
# The project's test command (`make test`): set up what tests need, lint, then test
# every package. Slow soak and load runs are separate targets.
set -euo pipefail
cd "$(dirname "$0")/.."

env_lines=$(scripts/test-env.sh)
eval "$env_lines"

echo "== go vet"
go vet ./...

echo "== staticcheck"
scripts/staticcheck.sh ./...

echo "== go test"
# -race on the packages whose correctness is about concurrency; the rest without, to keep
# the run well inside ten minutes on two cores.
go test -count=1 -timeout 12m ./...
