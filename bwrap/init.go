package bwrap

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"unsafe"
)

// InitArg is the first argument that makes this binary the sandbox's init:
// `agnx-lite __sandbox_init MEM_MB PROCS FILE_MB -- command...`.
const InitArg = "__sandbox_init"

// initInside is where the binary is bound inside the sandbox.
const initInside = "/run/agnx-init"

// Init runs the sandbox init when the process was started as one, and then
// never returns; otherwise it returns at once. main (and TestMain of
// packages that run sandboxed commands) calls it first thing.
func Init() {
	if len(os.Args) < 2 || os.Args[1] != InitArg {
		return
	}
	if err := initMain(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		os.Exit(126)
	}
}

// initMain sets the limits, then replaces itself with the command.
func initMain(args []string) error {
	if len(args) < 4 || args[3] != "--" {
		return fmt.Errorf("usage: %s MEM_MB PROCS FILE_MB -- command", InitArg)
	}
	nums := make([]uint64, 3)
	for i := range nums {
		n, err := strconv.ParseUint(args[i], 10, 64)
		if err != nil {
			return fmt.Errorf("bad limit %q", args[i])
		}
		nums[i] = n
	}
	cmd := args[4:]
	if len(cmd) == 0 {
		return fmt.Errorf("no command")
	}
	// Everything that allocates happens before the limits: once the
	// address space is capped, the Go runtime may not be able to grow its
	// heap, so after Setrlimit nothing but raw system calls runs.
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		return fmt.Errorf("%s: command not found", cmd[0])
	}
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	argv, err := syscall.SlicePtrFromStrings(cmd)
	if err != nil {
		return err
	}
	envv, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return err
	}
	limits := [...]struct {
		res int
		lim syscall.Rlimit
	}{
		{syscall.RLIMIT_AS, syscall.Rlimit{Cur: nums[0] << 20, Max: nums[0] << 20}},
		{rlimitNPROC, syscall.Rlimit{Cur: nums[1], Max: nums[1]}},
		{syscall.RLIMIT_FSIZE, syscall.Rlimit{Cur: nums[2] << 20, Max: nums[2] << 20}},
		{syscall.RLIMIT_CORE, syscall.Rlimit{}},
	}
	for i := range limits {
		// prlimit64 takes 64-bit limits on every architecture (setrlimit
		// has 32-bit ones on 32-bit arm).
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(limits[i].res),
			uintptr(unsafe.Pointer(&limits[i].lim)), 0, 0, 0); e != 0 {
			return fmt.Errorf("set limit %d: %w", limits[i].res, e)
		}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fmt.Errorf("exec %s: %w", path, e)
}

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name on
// every architecture; its number is 6 on all Linux ones agnx-lite builds for.
const rlimitNPROC = 6
