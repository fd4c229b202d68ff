#!/usr/bin/env bash
# Builds the release binaries for every target and prints their sizes.
# usage: ci/cross.sh GO LDFLAGS
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${1:-go}
LDFLAGS=${2:--s -w}
mkdir -p dist
printf '%-22s %10s\n' target size
for t in linux/amd64 linux/arm64 linux/arm/7 linux/arm/6 linux/riscv64; do
  IFS=/ read -r os arch arm <<<"$t"
  out="dist/agnx-lite-${os}-${arch}${arm:+v$arm}"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$out" ./cmd/agnx-lite
  size=$(stat -c %s "$out")
  awk -v t="$t" -v s="$size" 'BEGIN{printf "%-22s %8.1f MB\n", t, s/1048576}'
done
