#!/usr/bin/env bash
# What `make test` (and so .ci/run) runs: every stage, each to its end
# even when an earlier one failed, so that one red stage never hides
# what else is red; then one table (stage, result, tests ran, passed,
# failed, skipped, wall time) and a closing line with the totals. It
# exits 1 when any stage failed.
#
# The stages: deps (what the tests need, installed: ci/deps.sh,
# ci/mcp-peers.sh, ci/web-peers.sh), lint, build, cross (the release
# binaries, ci/cross.sh), memgate (the one figure CI enforces), the
# suite under QEMU for arm64 and armv7 (ci/test-qemu.sh), the native
# suite under the race detector, and the browser tests
# (lite/webui/e2e, also under -race).
#
# usage: ci/test.sh GO [STAGE...]      (default: every stage, in order)
# TEST_LOG, when set, names a folder where each stage's whole output is
# kept as STAGE.log besides being printed.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${1:?usage: ci/test.sh GO [STAGE...]}
shift
all=(deps lint build cross memgate qemu-arm64 qemu-armv7 native-race browser)
[ $# -gt 0 ] || set -- "${all[@]}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
logdir=${TEST_LOG:-$tmp/logs}
mkdir -p "$logdir"
# Every build is -trimpath, as the release binaries are: a package then
# compiles to the same cache entry whatever folder the clone is in, so a
# fresh clone reuses what an earlier run compiled, and the test stages
# reuse the release builds' compiles of the same architecture.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
bin=bin/agnx-lite
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
ldflags="-s -w -X main.version=$version"
e2e=./lite/webui/e2e

# testsum is built once; the test stages pipe go test -json through it.
testsum() { "$tmp/testsum" -slow 10 -counts "$tmp/counts" "$@"; }

lint() {
  local out
  local fmt=gofmt
  [ -x "${GO}fmt" ] && fmt=${GO}fmt
  out=$("$fmt" -l . 2>&1)
  if [ -n "$out" ]; then echo "gofmt needed (run gofmt -w on these):"; echo "$out"; return 1; fi
  "$GO" vet ./... || return 1
  "$GO" mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run go mod tidy"; return 1; }
}

native() { # go test flags and packages, under the race detector
  CGO_ENABLED=1 "$GO" test -race -count=1 -json "$@" 2>&1 | testsum -label "$stage"
}

run_stage() {
  case $1 in
  deps) ci/deps.sh && ci/mcp-peers.sh && ci/web-peers.sh ;;
  lint) lint ;;
  build) CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$ldflags" -o "$bin" ./cmd/agnx-lite ;;
  cross) ci/cross.sh "$GO" "$ldflags" ;;
  memgate) [ -x "$bin" ] || run_stage build && "$GO" run ./bench/memgate -bin "$bin" ;;
  qemu-arm64) TESTSUM_COUNTS=$tmp/counts ci/test-qemu.sh "$GO" arm64 ;;
  qemu-armv7) TESTSUM_COUNTS=$tmp/counts ci/test-qemu.sh "$GO" armv7 ;;
  native-race) native $("$GO" list ./... | grep -vx "github.com/agnx-lite/agnx-lite/lite/webui/e2e") ;;
  browser) native "$e2e" ;;
  *) echo "ci/test.sh: unknown stage $1 (${all[*]})"; return 2 ;;
  esac
}

rows=()
failed=0
tot_ran=0 tot_pass=0 tot_fail=0 tot_skip=0
all_start=$(date +%s)
if ! CGO_ENABLED=0 "$GO" build -o "$tmp/testsum" ./ci/testsum; then
  echo "ci/test.sh: ci/testsum does not build: the test stages cannot be summarised"
  exit 1
fi
for stage in "$@"; do
  echo
  echo "=== stage $stage"
  rm -f "$tmp/counts"
  start=$(date +%s)
  run_stage "$stage" 2>&1 | tee "$logdir/$stage.log"
  rc=${PIPESTATUS[0]}
  secs=$(($(date +%s) - start))
  result=passed
  [ "$rc" -eq 0 ] || { result=FAILED; failed=1; }
  ran=- pass=- fail=- skip=-
  if [ -s "$tmp/counts" ]; then
    read -r ran pass fail skip <"$tmp/counts"
    tot_ran=$((tot_ran + ran)) tot_pass=$((tot_pass + pass)) tot_fail=$((tot_fail + fail)) tot_skip=$((tot_skip + skip))
  fi
  rows+=("$(printf '%-12s %-7s %6s %7s %7s %8s %6dm%02ds' "$stage" "$result" "$ran" "$pass" "$fail" "$skip" $((secs / 60)) $((secs % 60)))")
  echo "=== stage $stage: $result in $((secs / 60))m$((secs % 60))s"
done
secs=$(($(date +%s) - all_start))
echo
echo "make test: every stage"
printf '%-12s %-7s %6s %7s %7s %8s %9s\n' stage result ran passed failed skipped time
for r in "${rows[@]}"; do echo "$r"; done
printf '%-12s %-7s %6s %7s %7s %8s %6dm%02ds\n' total "$([ $failed = 0 ] && echo passed || echo FAILED)" \
  "$tot_ran" "$tot_pass" "$tot_fail" "$tot_skip" $((secs / 60)) $((secs % 60))
echo "tests: $tot_pass passed, $tot_fail failed, $tot_skip skipped"
exit $failed
