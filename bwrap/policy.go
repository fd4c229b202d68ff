package bwrap

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// Policy says what a sandboxed command may reach.
type Policy struct {
	// Workspace is the host directory bound read-write at WorkDir.
	Workspace string
	// WorkDir is where the workspace appears inside; default /workspace.
	WorkDir string
	// WorkspaceReadOnly binds the workspace read-only (a subagent working
	// in its parent's workspace): the command writes only to its private
	// /tmp. Trust mode cannot enforce it, so it refuses to run.
	WorkspaceReadOnly bool
	// ReadOnly lists more host paths bound read-only at the same place.
	ReadOnly []string
	// Writable lists more host folders bound read-write at the same
	// place: a worker's own home.
	Writable []string
	// Chdir is where the command starts; default WorkDir. It is under
	// WorkDir, or one of ReadOnly or under one (bound at the same path
	// inside): a CLI tool's folder.
	Chdir string
	// SplitStderr keeps stderr apart from stdout, in Result.Stderr; each
	// is capped at MaxOutput.
	SplitStderr bool
	// Network gives the sandbox outbound network through slirp4netns or
	// pasta (Runner.NetworkHelper), in a
	// network namespace of its own where the host's loopback (the daemon,
	// Ollama, any local service) cannot be reached (see net.go); Run
	// connects it, Args alone does not. Without it the sandbox has only
	// a loopback interface of its own.
	Network bool
	// Env is the whole environment inside (it starts cleared); PATH, HOME
	// and LANG get defaults when missing.
	Env map[string]string
	// RunAs, when set, is the host user the command runs as. It takes a
	// daemon running as root: bwrap then creates no user namespace (so the
	// command is a real unprivileged user, whom RLIMIT_NPROC binds) and the
	// init drops to this user before it execs the command. The workspace
	// must be writable by that user.
	RunAs *User
	Limits

	// lifeline is set by Run when the init gets the read end of the
	// owner's lifeline as fd 3 (see Owner).
	lifeline bool
	// resolvFD, set by Run, is the descriptor bwrap reads the sandbox's
	// own resolv.conf from, instead of binding the host's (see dns.go).
	resolvFD int
	// netFD, set by Run for a sandbox with the network, is the first of
	// the init's two descriptors of the network hand-over (see netns):
	// it tells the daemon it runs on netFD and waits on netFD+1.
	netFD int
}

// User is a host uid and gid.
type User struct{ UID, GID uint32 }

// Limits bound one command. Zero values mean the defaults.
type Limits struct {
	Timeout   time.Duration // default 60 s
	MaxOutput int           // bytes of output kept; default 256 KiB
	MemoryMB  int           // address space; default 1024
	MaxProcs  int           // processes of the sandbox user; default 128
	FileMB    int           // largest file it may write; default DefaultFileMB; <0: none may grow
	TmpMB     int           // size of the private /tmp (in RAM); default 64
}

// DefaultFileMB is the largest file a command may write when its Limits
// say nothing.
const DefaultFileMB = 256

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 256 << 10
	}
	if l.MemoryMB <= 0 {
		l.MemoryMB = 1024
	}
	if l.MaxProcs <= 0 {
		l.MaxProcs = 128
	}
	switch {
	case l.FileMB == 0:
		l.FileMB = DefaultFileMB
	case l.FileMB < 0:
		l.FileMB = 0 // RLIMIT_FSIZE 0: files may be created empty, deleted, never grown
	}
	if l.TmpMB <= 0 {
		l.TmpMB = 64
	}
	return l
}

// sandboxUID is who the command runs as inside its user namespace.
const sandboxUID = "1000"

// systemDirs are bound read-only (or recreated as the host's symlinks, on
// merged-/usr systems).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// etcFiles are the parts of /etc programs need; secrets (/etc/shadow, ssh
// keys) are not among them.
var etcFiles = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/ssl", "/etc/ca-certificates", "/etc/mime.types", "/etc/os-release",
}

// netFiles are bound only when the network is granted.
var netFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf"}

// Args returns bwrap's arguments (without "bwrap" itself) to run command
// under p. initPath, when set, is a host executable bound into the sandbox
// and run first to apply the resource limits (see Init).
func Args(p Policy, initPath string, command []string) []string {
	lim := p.Limits.withDefaults()
	if initPath == "" {
		p.RunAs = nil // only the init can drop to RunAs
	}
	wd := p.WorkDir
	if wd == "" {
		wd = "/workspace"
	}
	a := namespaces(p)
	for _, d := range systemDirs {
		a = appendBind(a, d)
	}
	etc := etcFiles
	if p.Network {
		etc = append(etc[:len(etc):len(etc)], netFiles...)
	}
	if p.RunAs != nil {
		a = appendParents(a, etc[0]) // /etc, which bwrap would make root's alone
	}
	for _, f := range etc {
		if f == hostResolvConf && p.resolvFD > 0 {
			a = append(a, "--perms", "0644", "--ro-bind-data", strconv.Itoa(p.resolvFD), f)
			continue
		}
		a = appendBind(a, f)
	}
	// /tmp lives in RAM: its size is capped, or a command could fill it.
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", strconv.Itoa(lim.TmpMB<<20), "--tmpfs", "/tmp")
	// After /tmp's tmpfs, so a path under /tmp is not hidden by it.
	for _, f := range p.ReadOnly {
		if p.RunAs != nil {
			a = appendParents(a, f)
		}
		a = append(a, "--ro-bind-try", f, f)
	}
	switch {
	case p.Workspace != "" && p.WorkspaceReadOnly:
		a = append(a, "--ro-bind", p.Workspace, wd)
	case p.Workspace != "":
		a = append(a, "--bind", p.Workspace, wd)
	}
	for _, f := range p.Writable {
		if p.RunAs != nil {
			a = appendParents(a, f)
		}
		a = append(a, "--bind", f, f)
	}
	switch {
	case p.Chdir != "":
		a = append(a, "--chdir", p.Chdir)
	case p.Workspace != "":
		a = append(a, "--chdir", wd)
	}
	a = append(a, "--clearenv")
	for _, kv := range env(p.Env, wd) {
		a = append(a, "--setenv", kv[0], kv[1])
	}
	if initPath != "" {
		a = append(a, "--ro-bind", initPath, initInside, "--", initInside)
		a = append(a, initArgs(lim, p)...)
	} else {
		a = append(a, "--")
	}
	return append(a, command...)
}

// appendParents makes the folders above path that bwrap creates
// traversable: it would make them 0700, root's, which RunAs cannot enter.
// Existing ones (system folders, /tmp) are left as they are.
func appendParents(a []string, path string) []string {
	var dirs []string
	for d := filepath.Dir(filepath.Clean(path)); d != "/" && d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		a = append(a, "--perms", "0755", "--dir", dirs[i])
	}
	return a
}

// initArgs are the init's arguments, up to the command (see Init).
func initArgs(lim Limits, p Policy) []string {
	life, uid, gid := "-1", "-1", "-1"
	if p.lifeline {
		life = strconv.Itoa(lifelineFD)
	}
	if p.RunAs != nil {
		uid, gid = strconv.FormatUint(uint64(p.RunAs.UID), 10), strconv.FormatUint(uint64(p.RunAs.GID), 10)
	}
	netFD := "-1"
	if p.netFD > 0 {
		netFD = strconv.Itoa(p.netFD)
	}
	return []string{InitArg, strconv.Itoa(lim.MemoryMB), strconv.Itoa(lim.MaxProcs), strconv.Itoa(lim.FileMB),
		life, uid, gid, netFD, "--"}
}

// namespaces are the namespace and privilege options. The command runs
// as uid 1000 of a user namespace of its own, or, with RunAs, as that
// host user with no user namespace: bwrap (root) keeps only the
// capabilities it and the init need until the init drops to RunAs (which
// clears them all), and no_new_privs (which bwrap always sets) keeps the
// command from gaining any back.
func namespaces(p Policy) []string {
	var a []string
	switch {
	case p.RunAs == nil:
		a = []string{"--unshare-all", "--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID}
	default:
		// CAP_DAC_OVERRIDE lets bwrap, root without its other
		// capabilities, enter the workspace (RunAs's own, maybe 0700).
		a = []string{"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
			"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_DAC_OVERRIDE",
			"--unshare-net"}
	}
	return append(a, "--die-with-parent", "--new-session", "--hostname", "sandbox")
}

// appendBind binds a host path read-only, or recreates it as a symlink
// when it is one (merged /usr); a missing path is skipped.
func appendBind(a []string, path string) []string {
	fi, err := os.Lstat(path)
	if err != nil {
		return a
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if target, err := os.Readlink(path); err == nil {
			return append(a, "--symlink", target, path)
		}
		return a
	}
	return append(a, "--ro-bind", path, path)
}

func env(m map[string]string, home string) [][2]string {
	out := make([][2]string, 0, len(m)+3)
	defaults := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
	}
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			out = append(out, [2]string{k, v})
		}
	}
	for k, v := range m {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
