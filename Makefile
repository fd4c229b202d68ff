# agnx-lite — see README.md. Every target installs what it needs.
SHELL   := /bin/bash
GO      := $(shell ci/ensure-go.sh)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/agnx-lite
export CGO_ENABLED := 0

.PHONY: build run test test-qemu deps lint fuzz bench cross clean wasm

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/agnx-lite

# Run the daemon on the embedded defaults; the first start writes them into
# ~/.agnx-lite (or $AGNX_LITE_HOME). It prints how to chat with it.
run: build
	@$(BIN) serve $(ARGS)

# What CI runs: the release binaries of every target (make cross), the
# memory gate (the real daemon under the standard workload must stay under
# 50 MB peak RSS: the one figure CI enforces), the suite under QEMU for
# arm64 and armv7, then every test natively under the race detector, which
# needs cgo (and gcc, from ci/deps.sh) for the test binaries only: the
# release binaries stay CGO_ENABLED=0. Its summary comes last.
test: deps lint build cross
	$(GO) run ./bench/memgate -bin $(BIN)
	@ci/test-qemu.sh "$(GO)" $(QEMU_ARCHES)
	@set -o pipefail; CGO_ENABLED=1 $(GO) test -race -count=1 -json ./... 2>&1 | $(GO) run ./ci/testsum -label "native -race"

# The whole suite built for other architectures, run under qemu-user-static
# (installed when missing); tests that need what user-mode emulation cannot
# give skip with a reason. QEMU_ARCHES: arm64 armv7 armv6 riscv64.
QEMU_ARCHES ?= arm64 armv7
test-qemu:
	@ci/test-qemu.sh "$(GO)" $(QEMU_ARCHES)

# Debian packages the tests use (bubblewrap, qemu-user-static), installed
# when missing, and the reference MCP servers (npm, into .peers/) when node
# is there.
deps:
	@ci/deps.sh
	@ci/mcp-peers.sh
	@ci/web-peers.sh

lint:
	@out=$$($(GO)fmt -l . 2>/dev/null || gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

# Short coverage-guided runs of every fuzz target (the seeds run in `test`).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

# The figures of the README's Performance section, with the machine they
# were measured on, as markdown on stdout and in bench/last.md: issue 19's
# targets beside the Go floor (bench/floor), the 20,000-message long run
# (BENCH='-long 0' stops it at 2,000), then every figure; the
# raw `go test -bench` output goes to bench/last.txt (for benchstat). The
# arm64 build's cold start and one turn run under qemu-aarch64-static,
# labelled as emulated.
bench: build cross
	@ci/deps.sh
	$(GO) run ./bench/report -go $(GO) -bin $(BIN) -emulated dist/agnx-lite-linux-arm64 -md bench/last.md -raw bench/last.txt $(BENCH)


# The memory gate: the real daemon under the standard workload (100 agents,
# 200 sessions, 2,000 turns with a tool call each); fails when its peak RSS
# reaches 42 MiB or a turn fails. MEMGATE='-json f.json' adds flags.
.PHONY: bench-mem echo-wasm
bench-mem: build
	$(GO) run ./bench/memgate -bin $(BIN) $(MEMGATE)

# The gate's WASM tool from its text form (wat2wasm: Debian package wabt).
echo-wasm:
	@command -v wat2wasm >/dev/null || { echo "wat2wasm is missing: sudo apt-get install wabt"; exit 1; }
	wat2wasm bench/memgate/echo.wat -o bench/memgate/echo.wasm

# The example WASM tools, each built next to its tool.yaml as <name>.wasm.
WASM_EXAMPLES := $(notdir $(wildcard wasmtools/examples/*))
wasm:
	@for t in $(WASM_EXAMPLES); do \
	  echo "== wasm $$t"; GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -o wasmtools/examples/$$t/$$t.wasm ./wasmtools/examples/$$t || exit 1; \
	done

# Release binaries of every target into dist/ with a size table and the
# arm64 budget line (≤ 15 MB stripped).
cross:
	@ci/cross.sh "$(GO)" "$(LDFLAGS)"

clean:
	rm -rf bin dist
