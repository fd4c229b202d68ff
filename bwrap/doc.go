// Package bwrap runs commands in bubblewrap. A Policy (the workspace, what
// else may be read, whether the network is reachable, limits) becomes a
// bwrap argv: system directories read-only, the workspace read-write, a
// private /tmp, minimal /proc and /dev, new user, pid, ipc, uts, cgroup and
// network namespaces, --die-with-parent, --new-session and a cleared
// environment. Nothing of the daemon's environment gets in: bwrap itself
// (the sandbox's pid 1, whose environ is readable inside) starts with
// PATH and LANG only, the command gets only its policy's variables, and
// no descriptor past stderr.
//
// The network namespace is the sandbox's own even when the policy grants
// the network: slirp4netns (the lighter, by default) or pasta connects it
// to the outside through the host's sockets, with nothing forwarded to
// the host's loopback, so the daemon's API and other local services stay
// out of reach (net.go). Where the host's resolver is on its loopback,
// the sandbox gets a resolv.conf naming the helper's DNS forwarder, which
// passes port 53 alone to it (dns.go).
//
// Limits: a deadline that kills the whole process tree (the pid namespace
// dies with its first process), a cap on the output kept, a size cap on
// the private /tmp (it lives in RAM), and resource limits (address space,
// processes, file size) set inside the sandbox by this very binary
// re-executed as a tiny init (see Init) before it execs the command.
// Probe says whether bwrap is installed and works here.
//
// Policy.WorkspaceReadOnly binds the workspace read-only instead (a
// subagent working in its parent's workspace); trust mode, which could
// not enforce it, refuses such a policy (ErrTrustReadOnly).
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
// Reap does not find it; nor does it hide the daemon's /proc from the
// command.
//
// network: true: the host's addresses other than its main one (a second
// network card, a docker bridge) are reached like any other address, so a
// service bound to 0.0.0.0 answers there, and so are link-local addresses
// (a cloud's metadata service). The host's DNS resolver is reached on port
// 53 (through pasta, UDP only: an answer too long for UDP fails). Both
// helpers need /dev/net/tun, which systemd's PrivateDevices=yes hides;
// under a root daemon they run as root (pasta drops all capabilities but
// two and filters its system calls). slirp4netns costs about 3 MB of
// memory while the sandbox runs, pasta about 21 MB.
package bwrap
