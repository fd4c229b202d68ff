#!/usr/bin/env bash
# Runs the whole test suite built for other architectures under
# qemu-user-static: `go test -exec ci/qemu-exec.sh` builds each package's
# test binary for the target and runs it under qemu-<arch>-static with
# AGNX_EMULATED set (see ci/qemu-exec.sh for what that skips).
# qemu-user-static comes from ci/deps.sh; where it cannot be installed the
# run is skipped with a message, except in CI (CI=true), where it fails.
# usage: ci/test-qemu.sh GO [ARCH...]   ARCH: arm64 armv7 armv6 riscv64
#                                       (default: arm64 armv7)
# QEMU_TIMEOUT is go test's per-package timeout (default 10m).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${1:-go}
shift || true
[ $# -gt 0 ] || set -- arm64 armv7
ci/deps.sh
root=$(pwd)
status=0
summary=()
for a in "$@"; do
  case $a in
  arm64) env=(GOARCH=arm64) q=qemu-aarch64-static ;;
  armv7) env=(GOARCH=arm GOARM=7) q=qemu-arm-static ;;
  armv6) env=(GOARCH=arm GOARM=6) q=qemu-arm-static ;;
  riscv64) env=(GOARCH=riscv64) q=qemu-riscv64-static ;;
  *) echo "test-qemu: unknown arch $a (arm64, armv7, armv6, riscv64)" >&2; exit 2 ;;
  esac
  if ! command -v "$q" >/dev/null; then
    msg="test-qemu: $q is missing: sudo apt-get install qemu-user-static"
    if [ "${CI:-}" = true ]; then echo "$msg" >&2; exit 1; fi
    echo "$msg; skipping $a" >&2
    summary+=("$a: skipped ($q missing)")
    continue
  fi
  echo "== go test under $q (${env[*]})"
  start=$(date +%s)
  rc=0
  env CGO_ENABLED=0 "${env[@]}" "$GO" test -count=1 -timeout "${QEMU_TIMEOUT:-10m}" \
    -exec "'$root/ci/qemu-exec.sh' $q" ./... || rc=$?
  secs=$(($(date +%s) - start))
  verdict=passed
  [ $rc -eq 0 ] || { verdict=FAILED; status=1; }
  summary+=("$a ($q): $verdict in $((secs / 60))m$((secs % 60))s")
done
for s in "${summary[@]}"; do echo "test-qemu: $s"; done
exit $status
