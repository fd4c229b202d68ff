package bwrap

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
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
	limits := []struct {
		res int
		val uint64
	}{
		{syscall.RLIMIT_AS, nums[0] << 20},
		{rlimitNPROC, nums[1]},
		{syscall.RLIMIT_FSIZE, nums[2] << 20},
		{syscall.RLIMIT_CORE, 0},
	}
	for _, l := range limits {
		if err := syscall.Setrlimit(l.res, &syscall.Rlimit{Cur: l.val, Max: l.val}); err != nil {
			return fmt.Errorf("set limit %d: %w", l.res, err)
		}
	}
	cmd := args[4:]
	if len(cmd) == 0 {
		return fmt.Errorf("no command")
	}
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		return fmt.Errorf("%s: command not found", cmd[0])
	}
	return syscall.Exec(path, cmd, os.Environ())
}

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name on
// every architecture; its number is 6 on all Linux ones agnx-lite builds for.
const rlimitNPROC = 6
