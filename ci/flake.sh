#!/usr/bin/env bash
# `make flake`: hunts flaky tests before they find a newcomer. It runs
# the packages whose tests start processes, use the network, time things
# or re-execute their binary FLAKE_COUNT times each (go test -count)
# while stress-ng keeps every core busy beside them, natively under the
# race detector and under qemu arm64 (ci/test-qemu.sh), then lists every
# failure with its package and test, and how often it failed. Each test
# binary is built once per architecture; -count runs it again and again.
#
# usage: ci/flake.sh GO
#   FLAKE_COUNT   runs of each test (default 20)
#   FLAKE_ARCHES  native and/or arm64 (default: both)
#   FLAKE_PKGS    packages (default: the list below)
#   FLAKE_LOAD    0 runs without stress-ng (default 1)
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${1:?usage: ci/flake.sh GO}
count=${FLAKE_COUNT:-20}
pkgs=${FLAKE_PKGS:-./bwrap ./lite ./lite/sandbox ./lite/mcp ./lite/plugin ./lite/telegram ./lite/bgproc ./lite/workers
./lite/acpserver ./lite/httpapi ./lite/inbox ./lite/upkeep ./lite/toolset ./lite/autonomy ./lite/agentcache ./runtime ./runtime/sched ./runtime/llm ./storage ./wasmtools ./cmd/agnx-lite}
pkgs=$(echo $pkgs)
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" # as ci/test.sh: compiles shared with it
DEPS_FLAKE=1 ci/deps.sh || exit 1
ci/mcp-peers.sh || exit 1
tmp=$(mktemp -d)
load=
cleanup() {
  [ -n "$load" ] && kill "$load" 2>/dev/null && wait "$load" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ "${FLAKE_LOAD:-1}" = 1 ]; then
  command -v stress-ng >/dev/null || { echo "flake: stress-ng is missing: sudo apt-get install stress-ng" >&2; exit 1; }
  stress-ng --cpu "$(nproc)" --quiet &
  load=$!
  echo "== flake: stress-ng --cpu $(nproc) runs beside the tests (pid $load)"
fi
"$GO" build -o "$tmp/testsum" ./ci/testsum || exit 1
status=0
summary=()
for arch in ${FLAKE_ARCHES:-native arm64}; do
  start=$(date +%s)
  echo "== flake: $arch, -count=$count: $pkgs"
  case $arch in
  native)
    # shellcheck disable=SC2086
    CGO_ENABLED=1 "$GO" test -race -json -count="$count" -timeout 0 $pkgs 2>&1 |
      "$tmp/testsum" -label "flake native -race ×$count" | tee "$tmp/out"
    rc=${PIPESTATUS[1]}
    ;;
  arm64)
    QEMU_COUNT=$count QEMU_PKGS=$pkgs QEMU_TIMEOUT=0 ci/test-qemu.sh "$GO" arm64 | tee "$tmp/out"
    rc=${PIPESTATUS[0]}
    ;;
  *) echo "flake: unknown arch $arch (native, arm64)" >&2; exit 2 ;;
  esac
  secs=$(($(date +%s) - start))
  [ "$rc" -eq 0 ] || status=1
  summary+=("$arch ×$count in $((secs / 60))m$((secs % 60))s: $(grep -m1 '^testsum: ' "$tmp/out" | sed 's/^testsum: [^:]*: //')")
  sed -n '/^failed tests/,/^testsum/p' "$tmp/out" | sed '$d' >>"$tmp/failures"
done
echo
echo "flake: packages $pkgs"
for s in "${summary[@]}"; do echo "flake: $s"; done
if [ -s "$tmp/failures" ]; then cat "$tmp/failures"; else echo "flake: no test failed"; fi
exit $status
