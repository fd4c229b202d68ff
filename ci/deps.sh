#!/usr/bin/env bash
# Installs the Debian packages the tests use when they are missing:
# bubblewrap (the sandbox), slirp4netns and passt (pasta: the two helpers
# that connect the network namespace of a network: true sandbox; the tests
# run with each), qemu-user-static (the suite under emulation,
# ci/test-qemu.sh), gcc (cgo, which the race detector of `make test`
# needs), zsh and fish (the CLI's completion scripts are loaded in each),
# nodejs and npm (the reference MCP servers, the ACP SDK's peers and the
# browser tests run on Node: ci/mcp-peers.sh, ci/web-peers.sh; Debian 12's
# Node 18 is enough, and the peers are pinned to versions that run on
# it), wabt
# (wat2wasm: the WASM test modules are written as text), iproute2 (ip:
# the sandbox network tests look into the namespace) and, with
# DEPS_FLAKE=1, stress-ng (the load beside `make flake`).
#
# Without root or sudo it says what to install, and the tests that need
# them skip with a reason; under CI (CI=true) a package that cannot be
# installed fails the run instead, since nothing may be skipped there for
# a tool this script could have installed.
set -uo pipefail
need=()
want() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
want bwrap bubblewrap
want slirp4netns slirp4netns
want pasta passt
want "${CC:-gcc}" gcc
want zsh zsh
want fish fish
want qemu-aarch64-static qemu-user-static
want qemu-arm-static qemu-user-static
want node nodejs
want npm npm
want wat2wasm wabt
want ip iproute2
want nsenter util-linux
[ "${DEPS_FLAKE:-}" = 1 ] && want stress-ng stress-ng
mapfile -t need < <(printf '%s\n' "${need[@]}" | awk 'NF && !seen[$0]++')
[ ${#need[@]} -eq 0 ] && exit 0
fail() {
  echo "deps: $1" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 0
}
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    fail "missing ${need[*]}; install with: sudo apt-get install ${need[*]} (tests that need them will skip)"
  fi
fi
command -v apt-get >/dev/null 2>&1 ||
  fail "missing ${need[*]}, and there is no apt-get here: install them with your package manager (tests that need them will skip)"
echo "deps: installing ${need[*]}" >&2
$sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2 ||
  fail "could not install ${need[*]}; tests that need them will skip"
exit 0
