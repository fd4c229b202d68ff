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
# The whole run goes in two lanes, since one alone leaves a core idle for
# much of the time (tests that wait on a child process, a socket or a
# browser): after deps, the suite under QEMU (arm64, then armv7) runs
# beside everything else (lint, build, cross, memgate, the native suite,
# the browser tests). Each stage's output is printed whole when it ends.
#
# usage: ci/test.sh GO [STAGE...]   STAGEs run one after another, in
#                                   the order given (default: every
#                                   stage, in the two lanes)
# TEST_LOG, when set, names a folder where each stage's whole output is
# kept as STAGE.log.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${1:?usage: ci/test.sh GO [STAGE...]}
shift
all=(deps lint build cross memgate qemu-arm64 qemu-armv7 native-race browser)
# The line a whole run (every stage, two lanes) is held to on 2 cores
# from a fresh clone, in minutes: reported under the table, not enforced
# (only the memory gate fails CI on a figure). It is the manual's one
# source for this budget: docs/budgets_test.go reads it from here.
ci_line_minutes=20
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

# testsum is built once; the test stages pipe go test -json through it
# and it writes their counts for the table.
testsum() { "$tmp/testsum" -slow 10 -counts "$tmp/counts.$stage" "$@"; }

lint() {
  local out fmt=gofmt
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
  build) CGO_ENABLED=0 "$GO" build -ldflags "$ldflags" -o "$bin" ./cmd/agnx-lite ;;
  cross) ci/cross.sh "$GO" "$ldflags" ;;
  memgate) { [ -x "$bin" ] || run_stage build; } && "$GO" run ./bench/memgate -bin "$bin" ;;
  qemu-arm64) TESTSUM_COUNTS=$tmp/counts.$1 ci/test-qemu.sh "$GO" arm64 ;;
  qemu-armv7) TESTSUM_COUNTS=$tmp/counts.$1 ci/test-qemu.sh "$GO" armv7 ;;
  native-race) native $("$GO" list ./... | grep -vx "github.com/agnx-lite/agnx-lite/lite/webui/e2e") ;;
  browser) native "$e2e" ;;
  *) echo "ci/test.sh: unknown stage $1 (${all[*]})"; return 2 ;;
  esac
}

# stage runs one stage into its log, then prints the log whole (one
# lane at a time) and records its row.
stage() {
  local stage=$1 start rc secs result=passed
  echo "=== stage $stage started at $(date +%T)"
  start=$(date +%s)
  run_stage "$stage" >"$logdir/$stage.log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  [ "$rc" -eq 0 ] || result=FAILED
  {
    echo
    echo "=== stage $stage: its output"
    cat "$logdir/$stage.log"
    echo "=== stage $stage: $result in $((secs / 60))m$((secs % 60))s"
  } | flock "$tmp/print.lock" cat
  echo "$result $secs" >"$tmp/row.$stage"
}

lane() { for s in "$@"; do stage "$s"; done; }

all_start=$(date +%s)
if ! CGO_ENABLED=0 "$GO" build -o "$tmp/testsum" ./ci/testsum; then
  echo "ci/test.sh: ci/testsum does not build: the test stages cannot be summarised"
  exit 1
fi
if [ "$*" = "${all[*]}" ] && [ "${TEST_LANES:-2}" = 2 ]; then
  stage deps
  lane qemu-arm64 qemu-armv7 &
  qemu=$!
  lane lint build cross memgate native-race browser
  wait $qemu
else
  lane "$@"
fi

failed=0
tot_ran=0 tot_pass=0 tot_fail=0 tot_skip=0
secs=$(($(date +%s) - all_start))
echo
echo "make test: every stage"
printf '%-12s %-7s %6s %7s %7s %8s %9s\n' stage result ran passed failed skipped time
for s in "$@"; do
  result=FAILED t=0 ran=- pass=- fail=- skip=-
  [ -s "$tmp/row.$s" ] && read -r result t <"$tmp/row.$s"
  [ "$result" = passed ] || failed=1
  if [ -s "$tmp/counts.$s" ]; then
    read -r ran pass fail skip <"$tmp/counts.$s"
    tot_ran=$((tot_ran + ran)) tot_pass=$((tot_pass + pass)) tot_fail=$((tot_fail + fail)) tot_skip=$((tot_skip + skip))
  fi
  printf '%-12s %-7s %6s %7s %7s %8s %6dm%02ds\n' "$s" "$result" "$ran" "$pass" "$fail" "$skip" $((t / 60)) $((t % 60))
done
printf '%-12s %-7s %6s %7s %7s %8s %6dm%02ds\n' total "$([ $failed = 0 ] && echo passed || echo FAILED)" \
  "$tot_ran" "$tot_pass" "$tot_fail" "$tot_skip" $((secs / 60)) $((secs % 60))
if [ "$*" = "${all[*]}" ]; then
  over=within; [ "$secs" -le $((ci_line_minutes * 60)) ] || over=OVER
  printf 'time: %dm%02ds, %s the line of %d minutes for a whole run on 2 cores from a fresh clone (%s cores here)\n' \
    $((secs / 60)) $((secs % 60)) "$over" "$ci_line_minutes" "$(nproc)"
fi
echo "tests: $tot_pass passed, $tot_fail failed, $tot_skip skipped"
exit $failed
