package bwrap

import (
	"os"
	"strconv"
	"syscall"
)

// hostEnv is the whole environment of the host-side programs a sandbox is
// made of: bwrap, the network helper and, in trust mode, the init. Nothing
// comes from the daemon's environment, which holds its secrets (provider
// keys, the Telegram token): bwrap's own process is the sandbox's pid 1,
// and its /proc/1/environ is readable inside. The command itself gets
// only what its policy names (see env).
var hostEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}

// sysCloseRange is close_range(2): 436 on every Linux architecture
// agnx-lite builds for (they share the generic syscall table there).
const sysCloseRange = 436

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC (Linux 5.11).
const closeRangeCloexec = 1 << 2

// closeExtraFDs marks every descriptor above stderr close-on-exec, so the
// command inherits none: not the owner's lifeline, not whatever bwrap or
// a future caller left open. The Go runtime's own descriptors (epoll) are
// close-on-exec already, so they stay usable until the exec. Kernels
// before 5.11 get the same through /proc/self/fd.
func closeExtraFDs() {
	if _, _, e := syscall.RawSyscall(sysCloseRange, 3, ^uintptr(0), closeRangeCloexec); e == 0 {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, d := range ents {
		if fd, err := strconv.Atoi(d.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
