// Package bwrap runs commands in bubblewrap. A Policy (the workspace, what
// else may be read, whether the network is reachable, limits) becomes a
// bwrap argv: system directories read-only, the workspace read-write, a
// private /tmp, minimal /proc and /dev, new user, pid, ipc, uts, cgroup and
// network namespaces (the host network only when the policy grants it),
// --die-with-parent, --new-session and a cleared environment.
//
// Limits: a deadline that kills the whole process tree (the pid namespace
// dies with its first process), a cap on the output kept, and resource
// limits (address space, processes, file size) set inside the sandbox by
// this very binary re-executed as a tiny init (see Init) before it execs
// the command. Probe says whether bwrap is installed and works here.
//
// bwrap imports the standard library only.
//
// # Caveats
//
// RLIMIT_NPROC counts processes per user; when agnx-lite runs as root the
// kernel does not apply it, and a fork bomb is stopped by the deadline and
// the pid namespace instead.
package bwrap
