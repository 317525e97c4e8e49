# anysqs: `make help` lists the targets.
GO      ?= go
BACKEND ?= sqlite
CONFIG  ?=
# What `anysqs version` and /metrics' anysqs_build_info say about this build.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
ENDPOINT ?= http://127.0.0.1:9324
IMAGE   ?= localhost/anysqs:latest

.PHONY: help run build image image-test generate test test-served-emulators lint conformance report bench fuzz load bench-postgres soak-postgres bench-plugin bench-peers verify-all verify-peers system soak soak-migrate browser-check

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# make run compiles in only what its configuration needs: for the embedded default and
# PostgreSQL a lite build (-tags anysqs_lite) without the cloud SDKs, most of a cold build.
RUN_BACKEND = $(if $(CONFIG),$(shell scripts/config-backend.sh $(CONFIG)),sqlite)
RUN_TAGS    = $(if $(filter sqlite postgres,$(RUN_BACKEND)),anysqs_lite)

run: ## build bin/anysqs for the config's backend, then run the gateway (default: embedded SQLite on 127.0.0.1:9324, data in ./data); CONFIG=FILE for another
	@echo "building bin/anysqs $(VERSION)$(if $(RUN_TAGS), with SQLite and PostgreSQL only (make build: every backend)) for backend $(RUN_BACKEND)"
	CGO_ENABLED=0 $(GO) build -trimpath $(if $(RUN_TAGS),-tags $(RUN_TAGS)) -ldflags '$(LDFLAGS)' -o bin/anysqs ./cmd/anysqs
	bin/anysqs serve $(if $(CONFIG),--config $(CONFIG))

build: ## build bin/anysqs (static, version-stamped) and bin/anysqs-load
	@echo "building bin/anysqs $(VERSION) (the first build compiles every dependency: a few minutes with the cloud SDKs)"
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/anysqs ./cmd/anysqs
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/anysqs-load ./cmd/anysqs-load

# The image's binary is make build's, stripped (-s -w) as the Dockerfile's is.
image: ## build the OCI image IMAGE (localhost/anysqs:latest) with buildah from scratch: static bin/image/anysqs, CA bundle, user 65532, volume /data; nothing pulled
	@echo "building bin/image/anysqs $(VERSION) (every backend, stripped), then the image $(IMAGE)"
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o bin/image/anysqs ./cmd/anysqs
	VERSION=$(VERSION) COMMIT=$(COMMIT) scripts/image.sh bin/image/anysqs $(IMAGE)

image-test: image ## run the image with podman on loopback: SQLite in a volume across a restart, then the local PostgreSQL (needs podman, /usr/bin/aws)
	IMAGE=$(IMAGE) scripts/image-test.sh

generate: ## go generate: the SQS error table, Kind.String, the plugin protocol (needs protoc; CI fails if stale)
	$(GO) generate ./...

test: ## set up test services, lint, run every test (what CI runs)
	scripts/test.sh

test-served-emulators: ## the served conformance rows of the emulated backends, which make test skips, checked against docs/compat
	eval "$$(scripts/test-env.sh)"; $(GO) run ./cmd/anysqs report --quiet --out "$$(mktemp -d)" --check docs/compat --backends "$$(scripts/served-emulators.sh)"

lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	scripts/staticcheck.sh ./...

conformance: ## run the conformance suite on one backend: make conformance BACKEND=postgres
	eval "$$(scripts/test-env.sh)"; ANYSQS_CONFORMANCE_BACKENDS=$(BACKEND) $(GO) test -count=1 -run '^TestConformance$$/^$(BACKEND)$$/' ./conformance/ -v

browser-check: ## click the console's redrive in headless Chromium and refresh docs/*-1280.png (needs chromium, npm; REPORT=FILE)
	scripts/browser-check.sh

report: ## regenerate docs/compat from a fresh conformance run (only some: make report BACKENDS=sqlite,postgres)
	eval "$$(scripts/test-env.sh)"; $(GO) run ./cmd/anysqs report --out docs/compat $(if $(BACKENDS),--backends $(BACKENDS))

load: ## closed-loop load on a running gateway: make load ENDPOINT=http://127.0.0.1:9324 LOAD_ARGS='--duration 30s'
	$(GO) run ./cmd/anysqs-load --mode closed --paths gateway --endpoint $(ENDPOINT) $(LOAD_ARGS)

bench: ## driver and gateway benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./drivers/... ./gateway/...

fuzz: ## fuzz each protocol decoder, the JSON package against encoding/json and the signature check for 30 s
	$(GO) test -run '^$$' -fuzz FuzzJSONDecode -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzJSONMatchesStdlib -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzQueryDecode -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime 30s ./gateway/auth/

bench-postgres: ## gateway vs driver vs plain SQL on the local PostgreSQL, one run (docs/performance.md)
	eval "$$(scripts/test-env.sh)"; scripts/bench-postgres.sh $(BENCH_ARGS)

# Only PostgreSQL's service script, not all of test-env.sh: the emulators it would start
# share the cores the soak measures.
soak-postgres: ## 15 min of send/receive/delete churn on the local PostgreSQL, minutes 5-10 with a transaction held open: throughput, receive p99, table and index sizes per minute (SOAK_ARGS='--duration 3m --hold-from 1m --hold-for 1m')
	scripts/soak-postgres.sh $(SOAK_ARGS)

verify-all: ## anysqs verify --config on every backend here (services and emulators), each report compared with its served row
	eval "$$(scripts/test-env.sh)"; ANYSQS_VERIFY_ALL=1 $(GO) test -count=1 -timeout 60m -run '^TestVerifyEveryBackend$$' -v ./internal/verify/

bench-peers: ## anysqs on each local backend (Spanner and Firestore emulators too) against goaws, local-aws-sqs, fauxqs, moto and a net/http floor, loopback only, one run (docs/performance.md)
	eval "$$(scripts/test-env.sh)"; scripts/bench-peers.sh $(BENCH_ARGS)

verify-peers: ## anysqs verify --endpoint against anysqs on each local backend and the SQS servers bench-peers runs (goaws, local-aws-sqs, ...)
	eval "$$(scripts/test-env.sh)"; VERIFY=1 OUT=$${OUT:-verify-peers-out} scripts/bench-peers.sh $(VERIFY_ARGS)

bench-plugin: ## the driver plugin boundary's cost: driver and gateway in process vs as a plugin, one run (docs/performance.md)
	eval "$$(scripts/test-env.sh)"; scripts/bench-plugin.sh $(BENCH_ARGS)

system: ## system tests: two gateways and kill -9 on every shared backend, PostgreSQL restart
	eval "$$(scripts/test-env.sh)"; $(GO) test -count=1 -v ./conformance/system/

soak: ## the system tests with ten times the load (ANYSQS_SOAK=2)
	eval "$$(scripts/test-env.sh)"; ANYSQS_SOAK=2 $(GO) test -count=1 -timeout 30m -v ./conformance/system/

soak-migrate: ## anysqs migrate --mode move of 100,000 messages, SQLite to PostgreSQL, killed with SIGKILL at 7 steps and 8 random points (docs/migration.md)
	eval "$$(scripts/test-env.sh)"; ANYSQS_MIGRATE_KILL_MESSAGES=100000 ANYSQS_MIGRATE_KILLS=8 $(GO) test -count=1 -timeout 30m -run '^TestKillAndResume$$' -v ./internal/migrate/
