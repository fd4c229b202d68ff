#!/bin/sh
# The `go test -exec` program of ci/test-qemu.sh: runs a test binary built
# for another architecture under user-mode emulation.
# usage: ci/qemu-exec.sh QEMU TEST-BINARY [ARGS...]
#
# AGNX_EMULATED tells the tests they run under emulation: those that need
# what user-mode emulation cannot give (re-executing the test binary as a
# child, which the host kernel cannot run without binfmt_misc; bwrap's
# namespaces with that re-executed init) skip with a reason.
# GOARCH and friends are dropped so that a test which builds a helper with
# the host's `go` (a plugin, a WASM module) gets a host binary, which the
# emulated test can start: the kernel runs it natively.
q=$1
shift
AGNX_EMULATED=$q
export AGNX_EMULATED
unset GOARCH GOARM GOARM64 GO386 GOAMD64 GORISCV64 GOOS
exec "$q" "$@"
