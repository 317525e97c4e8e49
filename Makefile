# anysqs: `make help` lists the targets.
GO      ?= go
BACKEND ?= sqlite
CONFIG  ?= configs/embedded.yaml

.PHONY: help run build generate test lint conformance report bench fuzz load bench-postgres bench-plugin system soak

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

run: ## run the gateway on the embedded SQLite backend (127.0.0.1:9324, data in ./data)
	$(GO) run ./cmd/anysqs serve --config $(CONFIG)

build: ## build bin/anysqs
	$(GO) build -o bin/anysqs ./cmd/anysqs

generate: ## go generate: the SQS error table, Kind.String, the plugin protocol (needs protoc; CI fails if stale)
	$(GO) generate ./...

test: ## set up test services, lint, run every test (what CI runs)
	scripts/test.sh

lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	scripts/staticcheck.sh ./...

conformance: ## run the conformance suite on one backend: make conformance BACKEND=postgres
	eval "$$(scripts/test-env.sh)"; ANYSQS_CONFORMANCE_BACKENDS=$(BACKEND) $(GO) test -count=1 -run '^TestConformance$$/^$(BACKEND)$$/' ./conformance/ -v

report: ## regenerate docs/compat from a fresh conformance run (only some: make report BACKENDS=sqlite,postgres)
	eval "$$(scripts/test-env.sh)"; $(GO) run ./cmd/anysqs report --out docs/compat $(if $(BACKENDS),--backends $(BACKENDS))

bench: ## driver and gateway benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./drivers/... ./gateway/...

fuzz: ## fuzz each protocol decoder, the JSON package against encoding/json and the signature check for 30 s
	$(GO) test -run '^$$' -fuzz FuzzJSONDecode -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzJSONMatchesStdlib -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzQueryDecode -fuzztime 30s ./gateway/
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime 30s ./gateway/

bench-postgres: ## gateway vs driver vs plain SQL on the local PostgreSQL, one run (docs/performance.md)
	eval "$$(scripts/test-env.sh)"; scripts/bench-postgres.sh $(BENCH_ARGS)

bench-plugin: ## the driver plugin boundary's cost: driver and gateway in process vs as a plugin, one run (docs/performance.md)
	eval "$$(scripts/test-env.sh)"; scripts/bench-plugin.sh $(BENCH_ARGS)

system: ## system tests on PostgreSQL: two gateways, kill -9, database restart
	eval "$$(scripts/test-env.sh)"; $(GO) test -count=1 -v ./conformance/system/

soak: ## the system tests with ten times the load (ANYSQS_SOAK=2)
	eval "$$(scripts/test-env.sh)"; ANYSQS_SOAK=2 $(GO) test -count=1 -timeout 30m -v ./conformance/system/
