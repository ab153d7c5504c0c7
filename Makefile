# runedge — build, run, test, bench. Everything a fresh machine needs is
# fetched by `go` itself (the module proxy); no other install step.
GO      ?= go
PLUGINS := chat responses
WASM    := $(PLUGINS:%=plugins/build/%.wasm)
CONFIG  ?=
BENCHTIME ?= 1s

.PHONY: all build plugins run test vet bench clean FORCE

all: build

build: plugins bin/runedge

bin/runedge: FORCE
	$(GO) build -o $@ ./host/cmd/runedge

plugins: $(WASM)

# Plugins are standard Go built as wasip1 reactors; they are build outputs,
# rebuilt every time (the Go build cache makes that cheap).
plugins/build/%.wasm: FORCE
	@mkdir -p plugins/build
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/$*

# make run: the three endpoints on 127.0.0.1:8080, SQLite under ./data, the
# offline provider. Token: $SERVICE_TOKEN, or a generated one printed at start.
run: build
	./bin/runedge serve $(if $(CONFIG),--config $(CONFIG))

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 -timeout 20m ./...

bench: plugins
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

clean:
	rm -rf bin plugins/build

FORCE:
