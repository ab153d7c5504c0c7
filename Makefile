# runedge — build, run, test, bench. `make run` needs only Go (modules come
# from the module proxy); what `make test` needs besides (a C compiler,
# PostgreSQL 15, Node and npm, chromium) is listed in README.md.
GO      ?= go
PLUGINS := openai
WASM    := $(PLUGINS:%=plugins/build/%.wasm)
EXAMPLE_PLUGINS := redact tenant-instructions metadata
EXAMPLE_WASM    := $(EXAMPLE_PLUGINS:%=examples/plugins/build/%.wasm)
CONFIG  ?=
BENCHTIME ?= 1s

.PHONY: all build plugins example-plugins run test vet bench bench-edge clean FORCE example test-browser test-node fuzz-short

all: build

build: plugins example-plugins bin/runedge bin/runedge-xds

bin/runedge: FORCE
	$(GO) build -o $@ ./host/cmd/runedge

# The xDS control plane, a binary of its own so that runedge does not link
# it; `runedge xds …` execs the runedge-xds next to it (or on PATH).
bin/runedge-xds: FORCE
	$(GO) build -o $@ ./envoy/cmd/runedge-xds

plugins: $(WASM)

# Plugins are standard Go built as wasip1 reactors; they are build outputs,
# rebuilt every time (the Go build cache makes that cheap).
plugins/build/%.wasm: FORCE
	@mkdir -p plugins/build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/$*

# The example plugins operators may swap in (examples/plugins), built the
# same way.
example-plugins: $(EXAMPLE_WASM)

examples/plugins/build/%.wasm: FORCE
	@mkdir -p examples/plugins/build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./examples/plugins/$*

# make run: the three endpoints on 127.0.0.1:8080, SQLite under ./data, the
# offline provider. Token: $SERVICE_TOKEN, or a generated one printed at start.
run: build
	./bin/runedge serve $(if $(CONFIG),--config $(CONFIG))

# staticcheck runs at a pinned version through the module proxy (go run
# fetches and caches it), so a fresh machine needs nothing installed.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The stages (filters/builtin.Order's packages): none imports another; what
# two stages share lives in filters, filters/apierr, filters/turn or internal/contract.
STAGES := auth body model conversation mapping compaction nativereq run translate
space := $(subst ,, )

# The guest code as a plugin's wasip1 build compiles it: this module's
# packages the plugins are built from, vetted for that target with their
# tests (a test of the host's side, which a guest build leaves out, is
# tagged !wasip1).
WASM_SOURCES := $(PLUGINS:%=./plugins/%) ./examples/plugins/...
GUEST_LIST   := -f '{{with .Module}}{{if .Main}}{{$$.ImportPath}}{{end}}{{end}}'

vet:
	$(GO) mod tidy -diff
	@! $(GO) list -deps -test ./runner/... | grep '/runedge/host' || { echo "runner imports host (imports flow one way: host -> filters -> runner)"; exit 1; }
	@for s in $(STAGES); do \
		other=$$($(GO) list -deps ./filters/$$s | grep -E '/runedge/filters/($(subst $(space),|,$(STAGES)))$$' | grep -v "/filters/$$s$$"); \
		[ -z "$$other" ] || { echo "stage filters/$$s imports another stage: $$other (share through internal/contract or filters)"; exit 1; }; \
	done
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet $$(GOOS=wasip1 GOARCH=wasm $(GO) list -deps $(GUEST_LIST) $(WASM_SOURCES))
	$(GO) run $(STATICCHECK) ./...

# make test starts a throwaway PostgreSQL (scripts/testdb.sh) for the
# store's conformance suite and the fleet tests, and stops it afterwards,
# also when a test fails. CI=true makes a missing PostgreSQL a failure.
test: vet
	@pgdir=$$(mktemp -d) && chmod 711 $$pgdir && \
	trap 'scripts/testdb.sh stop '$$pgdir'/pg; rm -rf '$$pgdir EXIT INT TERM && \
	dsn=$$(scripts/testdb.sh start $$pgdir/pg) && \
	RUNEDGE_TEST_PG_DSN="$$dsn" CI=$${CI:-true} $(GO) test -race -count=1 -timeout 20m ./...
	$(MAKE) fuzz-short
	$(MAKE) test-browser
	$(MAKE) test-node

# Go fuzz targets, each run for FUZZTIME (their seed corpora also run in the
# plain `go test`). One "package:Target" per entry; add yours to the list
# (TestEveryFuzzTargetRuns in docs/ holds the list to the tree).
FUZZTIME ?= 10s
FUZZ_TARGETS := ./plugins/runtime:FuzzInstrument ./runner/provider/openai:FuzzDecodeChunk ./plugins/abi:FuzzNormalizeResult ./plugins/abi:FuzzDecodeRequestOutput ./plugins/abi:FuzzViewIsTheParsedEnvelope ./runner/schema:FuzzCheckBoundsValidation ./plugins/abi:FuzzParseStreamInput ./plugins/guestjson:FuzzValue ./plugins/guestjson:FuzzAppendJSONString ./plugins/guestjson:FuzzAppendStringValue ./plugins/compat:FuzzMapRequestOutputIsJSON ./plugins/compat:FuzzMapResultOutputIsJSON ./plugins/compat:FuzzMapRequestDecoded ./examples/plugins/redact/redact:FuzzStream ./runner/schema:FuzzNumbersOnTheBytes ./internal/jsondepth:FuzzScanMatchesReference ./internal/jsonfast:FuzzAppendString ./internal/jsonfast:FuzzString ./runner/provider/offline:FuzzFieldCount ./filters/model:FuzzReadValidTopMatchesGjson ./internal/jsondepth:FuzzValidMatchesGjson ./internal/jsonfast:FuzzArena ./internal/jsonfast:FuzzUnquoteWordwise ./internal/jsonfast:FuzzUnquoteLen ./internal/jsonfast:FuzzPlainPendingLiteral

# A target fails when it writes a failing input; scripts/fuzz-short.sh
# says why a bare "context deadline exceeded" is retried instead.
fuzz-short:
	@bash scripts/fuzz-short.sh $(GO) $(FUZZTIME) $(FUZZ_TARGETS)

# make example: runedge and the example app server (examples/appserver)
# together; prints the page's URL. Token: $SERVICE_TOKEN, or a generated one.
example: build bin/appserver
	bash examples/appserver/run-example.sh

bin/appserver: FORCE
	$(GO) build -o $@ ./examples/appserver

# The app server example and runedge's operator page (/ui/ on the admin
# listener) in headless Chromium (playwright-core); installs Debian's
# chromium and the npm packages when missing. Screenshots in artifacts/.
test-browser: build bin/appserver
	bash examples/appserver/e2e/run.sh

# The official JavaScript SDKs (openai, @openai/agents) against a real
# runedge (examples/clients/node); installs the npm packages from the lockfile.
test-node: build
	bash examples/clients/node/run.sh

bench: plugins
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# make bench-edge: runedge (openai provider; SQLite, then PostgreSQL) and a
# do-nothing reverse proxy in front of the same mock upstream, under the
# same load; the load on core 0, the targets on core 1 (when there are two).
# Starts and stops its own PostgreSQL, on the load's core: a fleet's
# database is another machine, so it must not take the core runedge is
# measured on (docs/performance.md). BENCH_EDGE_FLAGS e.g. -duration 5s
# -rounds 3 (medians of alternated rounds) -mappings native,wasm (the
# built-in default mapping and its WebAssembly build side by side).
BENCH_EDGE_FLAGS ?=
bench-edge: plugins bin/runedge bin/bench-edge
	@pin=$$( [ $$(nproc) -ge 2 ] && command -v taskset >/dev/null && echo "taskset -c 0" ) ; \
	pgdir=$$(mktemp -d) && chmod 711 $$pgdir && \
	trap 'scripts/testdb.sh stop '$$pgdir'/pg; rm -rf '$$pgdir EXIT INT TERM && \
	dsn=$$($$pin scripts/testdb.sh start $$pgdir/pg) && \
	RUNEDGE_BENCH_PG_DSN="$$dsn" $$pin bin/bench-edge run $(BENCH_EDGE_FLAGS)

bin/bench-edge: FORCE
	$(GO) build -o $@ ./bench/edge

clean:
	rm -rf bin plugins/build examples/plugins/build

FORCE:
