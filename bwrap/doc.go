// Package bwrap runs commands in bubblewrap. A Policy (the workspace, what
// else may be read, whether the network is reachable, limits) becomes a
// bwrap argv: system directories read-only, the workspace read-write, a
// private /tmp, minimal /proc and /dev, new user, pid, ipc, uts, cgroup and
// network namespaces (the host network only when the policy grants it),
// --die-with-parent, --new-session and a cleared environment.
//
// Limits: a deadline that kills the whole process tree (the pid namespace
// dies with its first process), a cap on the output kept, a size cap on
// the private /tmp (it lives in RAM), and resource limits (address space,
// processes, file size) set inside the sandbox by this very binary
// re-executed as a tiny init (see Init) before it execs the command.
// Probe says whether bwrap is installed and works here.
//
// A daemon running as root sets Policy.RunAs: the command then runs as
// that unprivileged host user (no user namespace; the init drops to it),
// so RLIMIT_NPROC binds. An Owner marks each sandbox with the daemon
// instance that started it; Reap, at the next start, ends what a killed
// instance left behind.
//
// bwrap imports the standard library only.
//
// # Caveats
//
// RLIMIT_NPROC counts processes per host user: without RunAs, a daemon
// running as root gets no process limit (the kernel exempts root), and
// with RunAs the count includes every other process of that user on the
// host (a dedicated uid is better than nobody). Trust mode has no pid
// namespace: what a command started in the background outlives it, and
// Reap does not find it.
package bwrap
