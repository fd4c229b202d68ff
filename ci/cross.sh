#!/usr/bin/env bash
# Builds the release binaries for every target into dist/, prints a size
# table and the budget line of the stripped linux/arm64 binary
# (budget_arm64 below, "MB" read as MiB as the memory gate reads it; the
# manual states it from here: docs/budgets_test.go checks that it does).
# Sizes are reported, not enforced: only the memory gate fails CI on a
# figure.
# usage: ci/cross.sh GO LDFLAGS
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${1:-go}
LDFLAGS=${2:--s -w}
budget_arm64=$((33 << 19)) # 16.5 MiB: 15.5 until subagents, workers, task boards and ACP (issue 18); 15 before issue 17
mkdir -p dist
printf '%-16s %-30s %10s %9s\n' target file bytes size
for t in linux/amd64 linux/arm64 linux/arm/7 linux/arm/6 linux/riscv64; do
  IFS=/ read -r os arch arm <<<"$t"
  out="dist/agnx-lite-${os}-${arch}${arm:+v$arm}"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/agnx-lite
  size=$(stat -c %s "$out")
  [ "$arch" = arm64 ] && arm64=$size
  awk -v t="$t" -v f="$out" -v s="$size" 'BEGIN{printf "%-16s %-30s %10d %6.1f MB\n", t, f, s, s/1048576}'
done
awk -v s="$arm64" -v b="$budget_arm64" 'BEGIN{printf "budget: linux/arm64 %.2f MB of %.1f MB: %s\n", s/1048576, b/1048576, (s <= b ? "ok" : "OVER BUDGET")}'
# The stamp must reach the binary: -X silently does nothing on a typo.
if [ "$(uname -m)" = x86_64 ] && [[ $LDFLAGS =~ main\.version=([^ ]+) ]]; then
  got=$(dist/agnx-lite-linux-amd64 version 2>&1 || true)
  case $got in *"${BASH_REMATCH[1]}"*) ;; *) echo "cross: the version was not stamped: '$got'" >&2; exit 1 ;; esac
fi
# What each dependency brings, on request (SIZES=1 make cross): ci/sizes
# reads the symbols of an unstripped linux/arm64 build.
if [ -n "${SIZES:-}" ]; then
  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "$GO" build -trimpath -ldflags "${LDFLAGS//-s -w/}" -o dist/agnx-lite-linux-arm64.syms ./cmd/agnx-lite
  "$GO" run ./ci/sizes dist/agnx-lite-linux-arm64.syms
fi
