#!/usr/bin/env bash
# Runs the whole test suite built for other architectures under
# qemu-user-static: `go test -exec ci/qemu-exec.sh` builds each package's
# test binary for the target and runs it under qemu-<arch>-static with
# AGNX_EMULATED set (see ci/qemu-exec.sh for what that skips).
# qemu-user-static comes from ci/deps.sh; where it cannot be installed the
# run is skipped with a message, except in CI (CI=true), where it fails.
#
# Tests that re-execute the test binary (the crash tests, the sandbox's
# init) need the kernel to run a foreign ELF: qemu's binfmt_misc handler,
# registered with the fix-binary flag (F) so that it works inside bwrap's
# namespaces too. As root (or with sudo) this script mounts binfmt_misc and
# registers the handlers that are missing (as Debian's qemu-user-binfmt
# would) and sets AGNX_REEXEC for the tests; where it cannot, those tests
# skip with the reason, which it puts in AGNX_NO_REEXEC.
# usage: ci/test-qemu.sh GO [ARCH...]   ARCH: arm64 armv7 armv6 riscv64
#                                       (default: arm64 armv7)
# QEMU_TIMEOUT is go test's per-package timeout (default 10m); QEMU_PKGS
# the packages (default ./...) and QEMU_COUNT their -count (ci/flake.sh);
# TESTSUM_COUNTS, a file where the last arch's "ran passed failed
# skipped" is written (ci/test.sh's table).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${1:-go}
shift || true
[ $# -gt 0 ] || set -- arm64 armv7
ci/deps.sh
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GO" build -o "$tmp/testsum" ./ci/testsum
bm=/proc/sys/fs/binfmt_misc
sudo=""
[ "$(id -u)" = 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && sudo="sudo -n"; }

# binfmt NAME QEMU MAGIC MASK: makes sure qemu's handler NAME runs foreign
# ELFs with the fix-binary flag; on failure prints why and returns 1.
binfmt() {
  local name=$1 q=$2 magic=$3 mask=$4
  if [ ! -e $bm/register ]; then
    if [ "$(id -u)" != 0 ] && [ -z "$sudo" ]; then
      echo "binfmt_misc is not mounted and mounting it needs root"; return 1
    fi
    $sudo mount -t binfmt_misc binfmt_misc $bm 2>/dev/null ||
      { echo "binfmt_misc cannot be mounted here (mount -t binfmt_misc binfmt_misc $bm failed)"; return 1; }
  fi
  if [ ! -e $bm/$name ]; then
    local interp flags=F conf=/usr/lib/binfmt.d/$name.conf
    interp=$(command -v "$q")
    # Debian's own registration (its -binfmt-P names preserve argv[0])
    local line=":$name:M::$magic:$mask:$interp:$flags"
    [ -r "$conf" ] && grep -q ':[A-Z]*F[A-Z]*$' "$conf" && line=$(grep -m1 "^:$name:" "$conf")
    if [ "$(id -u)" = 0 ]; then
      printf '%s\n' "$line" >$bm/register 2>/dev/null
    elif [ -n "$sudo" ]; then
      printf '%s\n' "$line" | $sudo tee $bm/register >/dev/null 2>&1
    fi
    [ -e $bm/$name ] || { echo "registering $name with binfmt_misc needs root"; return 1; }
  fi
  grep -qx enabled $bm/$name || { echo "the binfmt_misc handler $name is disabled"; return 1; }
  grep -q '^flags:.*F' $bm/$name ||
    { echo "the binfmt_misc handler $name lacks the fix-binary flag (F), so it fails inside bwrap's namespaces"; return 1; }
}

elf=\\x7f\\x45\\x4c\\x46
m32=\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff
status=0
summary=()
for a in "$@"; do
  case $a in
  arm64) env=(GOARCH=arm64) q=qemu-aarch64-static name=qemu-aarch64 magic=$elf'\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00' ;;
  armv7) env=(GOARCH=arm GOARM=7) q=qemu-arm-static name=qemu-arm magic=$elf'\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x28\x00' ;;
  armv6) env=(GOARCH=arm GOARM=6) q=qemu-arm-static name=qemu-arm magic=$elf'\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x28\x00' ;;
  riscv64) env=(GOARCH=riscv64) q=qemu-riscv64-static name=qemu-riscv64 magic=$elf'\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xf3\x00' ;;
  *) echo "test-qemu: unknown arch $a (arm64, armv7, armv6, riscv64)" >&2; exit 2 ;;
  esac
  if ! command -v "$q" >/dev/null; then
    msg="test-qemu: $q is missing: sudo apt-get install qemu-user-static"
    if [ "${CI:-}" = true ]; then echo "$msg" >&2; exit 1; fi
    echo "$msg; skipping $a" >&2
    summary+=("$a: skipped ($q missing)")
    continue
  fi
  reexec=(AGNX_REEXEC=binfmt_misc)
  if why=$(binfmt "$name" "$q" "$magic" "$m32"); then
    echo "== binfmt_misc: $name runs foreign ELFs: the tests that re-execute their binary run"
  else
    reexec=(AGNX_REEXEC= "AGNX_NO_REEXEC=$why")
    echo "== binfmt_misc: $why: the tests that re-execute their binary skip"
  fi
  echo "== go test under $q (${env[*]})"
  start=$(date +%s)
  rc=0
  out=$tmp/summary-$a
  # shellcheck disable=SC2086 # QEMU_PKGS is a list
  env CGO_ENABLED=0 "${env[@]}" "${reexec[@]}" "$GO" test -json -count="${QEMU_COUNT:-1}" -timeout "${QEMU_TIMEOUT:-10m}" \
    -exec "'$root/ci/qemu-exec.sh' $q" ${QEMU_PKGS:-./...} 2>&1 |
    "$tmp/testsum" -label "$a" -slow 10 ${TESTSUM_COUNTS:+-counts "$TESTSUM_COUNTS"} | tee "$out" || rc=$?
  secs=$(($(date +%s) - start))
  verdict=passed
  [ $rc -eq 0 ] || { verdict=FAILED; status=1; }
  counts=$(sed -n 's/^testsum: [^:]*: //p' "$out")
  summary+=("$a ($q): $verdict in $((secs / 60))m$((secs % 60))s: $counts")
done
for s in "${summary[@]}"; do echo "test-qemu: $s"; done
exit $status
