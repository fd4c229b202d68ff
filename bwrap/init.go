package bwrap

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"
)

// InitArg is the first argument that makes this binary the sandbox's init:
// `agnx-lite __sandbox_init MEM_MB PROCS FILE_MB LIFELINE_FD UID GID NET_FD -- command...`
// (-1 for no lifeline, for keeping the user, and for no network hand-over).
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

// initMain checks that its daemon is still there, sets the limits, drops
// to the sandbox user, then replaces itself with the command.
func initMain(args []string) error {
	nums, cmd, err := parseInit(args)
	if err != nil {
		return err
	}
	if life := int(nums[3]); life >= 0 {
		if orphaned(life) {
			return fmt.Errorf("the daemon that started this sandbox is gone: not running %s", cmd[0])
		}
		syscall.Close(life) // the command has no use for it
	}
	if fd := int(nums[6]); fd >= 0 {
		if err := awaitNetwork(fd); err != nil {
			return err
		}
	}
	closeExtraFDs()
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
	// A write past RLIMIT_FSIZE fails with "File too large" instead of
	// killing the writer (often the shell itself): ignored signals stay
	// ignored across exec.
	signal.Ignore(syscall.SIGXFSZ)
	// Setresuid and friends change every thread of the process, and
	// allocate: before the limits too.
	if uid, gid := nums[4], nums[5]; uid >= 0 && gid >= 0 {
		if err := dropTo(int(uid), int(gid)); err != nil {
			return err
		}
	}
	mb := func(n int64) uint64 { return uint64(n) << 20 }
	limits := [...]struct {
		res int
		lim syscall.Rlimit
	}{
		{syscall.RLIMIT_AS, syscall.Rlimit{Cur: mb(nums[0]), Max: mb(nums[0])}},
		{rlimitNPROC, syscall.Rlimit{Cur: uint64(nums[1]), Max: uint64(nums[1])}},
		{syscall.RLIMIT_FSIZE, syscall.Rlimit{Cur: mb(nums[2]), Max: mb(nums[2])}},
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

// awaitNetwork is the init's side of the network hand-over (see netns):
// it tells the daemon on fd that bwrap's set-up, the namespace's
// loopback included, is over, then waits on fd+1 until the helper has
// connected the namespace. EOF there means the daemon gave up on the
// network, or died: the command must not run without it.
func awaitNetwork(fd int) error {
	_, err := syscall.Write(fd, []byte{1})
	syscall.Close(fd)
	if err != nil {
		return fmt.Errorf("network hand-over: %w", err)
	}
	var b [1]byte
	n, err := syscall.Read(fd+1, b[:])
	for err == syscall.EINTR {
		n, err = syscall.Read(fd+1, b[:])
	}
	syscall.Close(fd + 1)
	if n != 1 {
		return fmt.Errorf("the sandbox's network could not be connected: not running the command")
	}
	return nil
}

// parseInit splits the init's arguments into its numbers and the
// command.
func parseInit(args []string) (nums [7]int64, cmd []string, err error) {
	if len(args) < len(nums)+1 || args[len(nums)] != "--" {
		return nums, nil, fmt.Errorf("usage: %s MEM_MB PROCS FILE_MB LIFELINE_FD UID GID NET_FD -- command", InitArg)
	}
	for i := range nums {
		n, err := strconv.ParseInt(args[i], 10, 64)
		if err != nil || n < -1 {
			return nums, nil, fmt.Errorf("bad number %q", args[i])
		}
		nums[i] = n
	}
	if cmd = args[len(nums)+1:]; len(cmd) == 0 {
		return nums, nil, fmt.Errorf("no command")
	}
	return nums, cmd, nil
}

// dropTo makes the process uid:gid with no supplementary groups; going
// from uid 0 to another clears every capability.
func dropTo(uid, gid int) error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("set gid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("set uid %d: %w", uid, err)
	}
	return nil
}

// orphaned tells whether every write end of the lifeline is closed: the
// daemon died while bwrap was setting up, after the moment bwrap's own
// --die-with-parent could have caught it.
func orphaned(fd int) bool {
	pfd := struct {
		fd             int32
		events, revent int16
	}{fd: int32(fd), events: pollIn}
	var zero syscall.Timespec
	n, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
		uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return e == 0 && n == 1 && pfd.revent&pollHup != 0
}

const (
	pollIn  = 0x1
	pollHup = 0x10
)

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name on
// every architecture; its number is 6 on all Linux ones agnx-lite builds for.
const rlimitNPROC = 6
