# agnx-lite — see README.md. Every target installs what it needs.
SHELL   := /bin/bash
GO      := $(shell ci/ensure-go.sh)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin/agnx-lite
export CGO_ENABLED := 0

.PHONY: build run test flake test-qemu deps lint fuzz bench cross clean wasm docs

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/agnx-lite

# Run the daemon on the embedded defaults; the first start writes them into
# ~/.agnx-lite (or $AGNX_LITE_HOME). It prints how to chat with it.
run: build
	@$(BIN) serve $(ARGS)

# What CI runs (ci/test.sh): every stage, each run to its end even when
# an earlier one failed, then one table of them all (stage, result,
# tests ran/passed/failed/skipped, wall time); it fails when any stage
# did. The stages: deps (what the tests need, installed), lint, build,
# cross (the release binaries of every target), memgate (the real daemon
# under the standard workload must stay under the 42 MiB peak RSS line:
# the one figure CI enforces), the suite under QEMU for arm64 and armv7,
# the native suite under the race detector (which needs cgo, and gcc
# from ci/deps.sh, for the test binaries only: the release binaries stay
# CGO_ENABLED=0), and the browser tests. STAGES='lint native-race' runs
# only those; TEST_LOG=DIR keeps each stage's output in DIR.
test:
	@ci/test.sh "$(GO)" $(STAGES)

# Hunts flaky tests: the packages whose tests start processes, use the
# network, time things or re-execute their binary, FLAKE_COUNT times
# each (default 20) while stress-ng loads every core, natively under
# the race detector and under qemu arm64; then every failure with its
# package and test. FLAKE_ARCHES='native arm64', FLAKE_PKGS='./bwrap'.
flake:
	@ci/flake.sh "$(GO)"

# The whole suite built for other architectures, run under qemu-user-static
# (installed when missing); tests that need what user-mode emulation cannot
# give skip with a reason. QEMU_ARCHES: arm64 armv7 armv6 riscv64.
QEMU_ARCHES ?= arm64 armv7
test-qemu:
	@ci/test-qemu.sh "$(GO)" $(QEMU_ARCHES)

# What the tests need, installed when missing: Debian packages (see
# ci/deps.sh), the reference MCP servers and the ACP SDK (npm, into
# .peers/) and the browser tests' Chromium and playwright-core.
deps:
	@ci/deps.sh
	@ci/mcp-peers.sh
	@ci/web-peers.sh

lint:
	@ci/test.sh "$(GO)" lint

# Short coverage-guided runs of every fuzz target (the seeds run in `test`).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

# The figures of the manual's performance page (docs/internals/
# performance.md), with the machine they were measured on, as markdown on stdout and in bench/last.md: issue 19's
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

# The generated references, rewritten from the code: docs/reference/
# configuration.md (agnx.yaml, agent.yaml and the environment, from the
# config structs, their doc comments and defaults), cli.md (the commands'
# flag sets) and events.md (the session event types). Each is a golden
# test in the package that owns its data, which fails when its page is
# stale; -update rewrites the page instead.
docs:
	$(GO) test ./lite/config -run '^TestConfigReference$$' -count=1 -update
	$(GO) test ./cmd/agnx-lite -run '^TestCLIReference$$' -count=1 -update
	$(GO) test ./runtime -run '^TestEventsReference$$' -count=1 -update

# Release binaries of every target into dist/ with a size table and the
# arm64 budget line (≤ 16.5 MB stripped: budget_arm64 in ci/cross.sh).
cross:
	@ci/cross.sh "$(GO)" "$(LDFLAGS)"

clean:
	rm -rf bin dist
