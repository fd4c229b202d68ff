#!/bin/sh
# The `go test -exec` program of ci/test-qemu.sh: runs a test binary built
# for another architecture under user-mode emulation.
# usage: ci/qemu-exec.sh QEMU TEST-BINARY [ARGS...]
#
# AGNX_EMULATED tells the tests they run under emulation. Re-executing the
# test binary as a child (a crash test's victim, bwrap's init) needs the
# host kernel to run a foreign ELF: ci/test-qemu.sh sets AGNX_REEXEC when
# qemu's binfmt_misc handler is registered, and otherwise AGNX_NO_REEXEC
# to the reason, with which those tests skip.
# GOARCH and friends are dropped so that a test which builds a helper with
# the host's `go` (a plugin, a WASM module) gets a host binary, which the
# emulated test can start: the kernel runs it natively.
q=$1
shift
AGNX_EMULATED=$q
export AGNX_EMULATED
unset GOARCH GOARM GOARM64 GO386 GOAMD64 GORISCV64 GOOS
exec "$q" "$@"
