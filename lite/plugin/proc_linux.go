package plugin

import "syscall"

// sysProcAttr puts the plugin in its own process group (so that stopping
// it stops its children) and has the kernel kill it if the daemon dies,
// so that a restarted daemon never finds a second copy still connected.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
