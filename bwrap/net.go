package bwrap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A sandbox granted the network still gets a network namespace of its
// own: sharing the host's would hand it the host's loopback, where the
// daemon's API, Ollama and every other local service listen. A helper
// connects that namespace to the outside: slirp4netns by default, run
// with --disable-host-loopback (its gateway address 10.0.2.2 would
// otherwise be the host's loopback), or pasta (from the passt package),
// which connects that namespace to the outside through
// ordinary sockets of the host: outbound TCP, UDP and ICMP work, while
//
//   - no port is forwarded either way (-t/-u/-T/-U none): with -T/-U
//     auto, a connection to the namespace's own loopback would be spliced
//     to the host's loopback;
//   - the gateway address is not mapped to the host (--no-map-gw), which
//     would be the host's loopback again under another name;
//   - the namespace gets the host's own address, so the host's address
//     seen from inside is the namespace itself, not the host.
//
// bwrap creates the namespaces and reports its child on --info-fd. The
// helper must not touch the namespace before bwrap's own set-up is over:
// bwrap adds 127.0.0.1 to the namespace's loopback with NLM_F_EXCL and
// only then brings it up, while both helpers bring that loopback up
// first thing, and bringing it up makes the kernel add the address, so a
// helper a moment early made bwrap fail with "loopback: Failed
// RTM_NEWADDR" (about 1 start in 30 with pasta on a loaded box, now and
// then with slirp4netns; bwrap 0.8 adds a stale "No child processes").
// So the hand-over goes through the sandbox's init, which runs only once
// bwrap is done: it writes a byte on its first descriptor of the
// hand-over, the daemon then starts the helper (pasta says it is ready
// through its pid file, slirp4netns on its --ready-fd) and writes a byte
// to the init's second descriptor, and only then does the init run the
// command. The helper is the daemon's child, with its parent-death
// signal, and is ended when bwrap exits.

// The network helpers Runner.NetworkHelper may name.
const (
	Slirp4netns = "slirp4netns"
	Pasta       = "pasta"
)

// lookNet returns the network helper choice names: pasta, slirp4netns,
// or, for "" or "auto", slirp4netns where it is installed and pasta
// otherwise. slirp4netns comes first because it is the lighter: measured
// on amd64 while a sandbox ran sleep 1, its peak RSS (VmHWM) was 3.2 MB
// against pasta's 21.5 MB, and it was ready in ~55 ms against pasta's
// 65-115 ms; ten network sandboxes at once on a 512 MB Raspberry Pi are
// 32 MB against 215 MB. pasta's strengths (throughput through splice,
// IPv6 by default) matter little to an agent's curl or pip.
func lookNet(choice string) (string, error) {
	names := []string{Slirp4netns, Pasta}
	if choice != "" && choice != "auto" {
		names = []string{choice}
	}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrUnavailable, netHelp(choice))
}

// netHelp is the one sentence of a network: true that cannot have its
// network namespace because its helper is missing.
func netHelp(choice string) string {
	switch choice {
	case Pasta:
		return "network: true needs pasta to give the sandbox a network of its own, and it is not installed: " +
			"install it with \"sudo apt-get install passt\""
	case Slirp4netns:
		return "network: true needs slirp4netns to give the sandbox a network of its own, and it is not installed: " +
			"install it with \"sudo apt-get install slirp4netns\""
	}
	return "network: true needs slirp4netns or pasta to give the sandbox a network of its own, and neither is installed: " +
		"install one with \"sudo apt-get install slirp4netns\""
}

// netns is the network of one sandbox while it is set up and runs.
type netns struct {
	helper      string
	info, infoW *os.File // bwrap writes its child's pid to infoW
	up, upW     *os.File // the init writes a byte to upW once bwrap is done...
	goR, goW    *os.File // ...and waits for one on goR, written once the helper is ready
	resolv      *os.File // the sandbox's resolv.conf (read end), nil: the host's
	cmd         *exec.Cmd
	stderr      capped
}

// newNetns finds the helper and makes the pipes of bwrap's --info-fd
// and of the init's hand-over, and the sandbox's own resolv.conf where
// the host's cannot serve it (see sandboxResolv).
func newNetns(choice string) (*netns, error) {
	helper, err := lookNet(choice)
	if err != nil {
		return nil, err
	}
	n := &netns{helper: helper, stderr: capped{max: 2 << 10}}
	if n.info, n.infoW, err = os.Pipe(); err == nil {
		n.up, n.upW, err = os.Pipe()
	}
	if err == nil {
		n.goR, n.goW, err = os.Pipe()
	}
	if err == nil {
		n.resolv, err = resolvPipe(dnsForward(helper))
	}
	if err != nil {
		n.close()
		return nil, fmt.Errorf("sandbox network: %w", err)
	}
	return n, nil
}

// wire gives bwrap the pipes as the descriptors after files, the init
// its two of the hand-over through p.netFD, and the sandbox's
// resolv.conf through p. It returns bwrap's options and the files it
// gets from fd 3 on.
func (n *netns) wire(p *Policy, files []*os.File) ([]string, []*os.File) {
	first := 3 + len(files)
	opts := []string{"--info-fd", strconv.Itoa(first)}
	files = append(files, n.infoW, n.upW, n.goR)
	p.netFD = first + 1
	if n.resolv != nil {
		p.resolvFD = first + 3
		files = append(files, n.resolv)
	}
	return opts, files
}

// attach connects the namespace of the started bwrap once bwrap's
// set-up is over, and lets the init run the command. It returns an
// error, saying what to do, when the helper cannot.
func (n *netns) attach(deadline time.Time) error {
	closeFiles([]*os.File{n.infoW, n.upW, n.goR}) // the sandbox's ends: EOF when it dies
	n.infoW, n.upW, n.goR = nil, nil, nil
	if n.resolv != nil {
		n.resolv.Close() // bwrap has its copy
		n.resolv = nil
	}
	var info struct {
		Pid int `json:"child-pid"`
	}
	_ = n.info.SetReadDeadline(deadline)
	if err := json.NewDecoder(n.info).Decode(&info); err != nil || info.Pid <= 0 {
		return fmt.Errorf("bwrap did not report its sandbox: %v", err)
	}
	_ = n.up.SetReadDeadline(deadline)
	if _, err := io.ReadAtLeast(n.up, make([]byte, 1), 1); err != nil {
		return fmt.Errorf("bwrap did not set up the sandbox: %v", err)
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ready.Close()
	args, files, err := helperArgs(n.helper, info.Pid)
	if err != nil {
		readyW.Close()
		return err
	}
	files = append(files, readyW)
	n.cmd = exec.Command(n.helper, args...)
	n.cmd.Env = hostEnv
	n.cmd.ExtraFiles = files
	n.cmd.Stdout, n.cmd.Stderr = &n.stderr, &n.stderr
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = n.cmd.Start()
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		n.cmd = nil
		return fmt.Errorf("start %s: %w", filepath.Base(n.helper), err)
	}
	_ = ready.SetReadDeadline(deadline)
	if _, err := io.ReadAtLeast(ready, make([]byte, 1), 1); err != nil {
		return fmt.Errorf("%s could not connect the sandbox's network: %s", filepath.Base(n.helper), n.problem())
	}
	if _, err := n.goW.Write([]byte{1}); err != nil {
		return fmt.Errorf("release the sandbox: %w", err)
	}
	return nil
}

// helperArgs is the helper's command line to connect the network
// namespace of pid, with the files it gets from fd 3 on (the namespaces,
// opened here); the caller adds the ready pipe after them.
//
// A daemon that is not root runs bwrap unprivileged: the network
// namespace belongs to the user namespace bwrap made, which the helper
// (the same user) joins first. A root daemon's bwrap makes it in the
// host's user namespace, so only the network namespace is joined; pasta
// would drop to nobody before that, so it stays root (it then drops its
// capabilities but two and filters its system calls). The namespaces go
// as descriptors: pasta, root with fewer capabilities than the sandbox's
// first process, could not open them by pid, and none of the helpers
// then reads a /proc path of a process that may be gone.
func helperArgs(helper string, pid int) ([]string, []*os.File, error) {
	root := os.Geteuid() == 0
	netns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, nil, fmt.Errorf("open the sandbox's net namespace: %w", err)
	}
	files := []*os.File{netns}
	if !root {
		// The user namespace that owns the network namespace, asked of
		// the network namespace itself: /proc/PID/ns/user is not it once
		// bwrap's set-up is over, since bwrap then nests the sandbox's
		// own user namespace (uid 1000) inside that one, where the
		// helper would have no right to join the network namespace.
		fd, err := unix.IoctlRetInt(int(netns.Fd()), unix.NS_GET_USERNS)
		if err != nil {
			netns.Close()
			return nil, nil, fmt.Errorf("find the user namespace of the sandbox's network: %w", err)
		}
		files = append(files, os.NewFile(uintptr(fd), "userns"))
	}
	ready := strconv.Itoa(3 + len(files))
	if filepath.Base(helper) == "slirp4netns" {
		// 10.0.2.2 would be the host's loopback without
		// --disable-host-loopback.
		a := []string{"--configure", "--mtu=65520", "--disable-host-loopback", "--ready-fd=" + ready,
			"--netns-type=path", "/proc/self/fd/3"}
		if root {
			// As root it parses the packets the sandboxed command sends:
			// it drops its capabilities and confines itself, as podman has
			// it do. (Joined to the sandbox's user namespace, as a daemon
			// that is not root runs it, it has no privilege to drop, and
			// its sandbox set-up fails there: setegid(0).)
			a = append(a, "--enable-sandbox", "--enable-seccomp")
		} else {
			a = append(a, "--userns-path=/proc/self/fd/4")
		}
		return append(a, "tap0"), files, nil
	}
	a := []string{"--config-net", "--foreground", "--quiet",
		"-t", "none", "-u", "none", "-T", "none", "-U", "none", "--no-map-gw", "--dns-forward", pastaDNS,
		"--pid", "/proc/self/fd/" + ready,
		"--netns", "/proc/self/fd/3"}
	if !hostHasIPv6Route() {
		a = append(a, "-4") // it would wait for IPv6 it cannot use: twice the start-up
	}
	if root {
		return append(a, "--runas", "0:0"), files, nil
	}
	return append(a, "--userns", "/proc/self/fd/4"), files, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// problem is what the helper said, without pasta's complaints about
// syslog.
func (n *netns) problem() string {
	if n.cmd != nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
		n.cmd = nil
	}
	var lines []string
	for l := range strings.Lines(n.stderr.buf.String()) {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "syslog") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "it exited without saying why"
	}
	msg := strings.Join(lines, "; ")
	if strings.Contains(msg, "tun") {
		msg += " (it needs /dev/net/tun: under systemd, PrivateDevices=yes hides it)"
	}
	return msg
}

// close ends the helper and closes what is left of the pipes.
func (n *netns) close() {
	if n.cmd != nil {
		_ = n.cmd.Process.Kill()
		_ = n.cmd.Wait()
	}
	for _, f := range []*os.File{n.info, n.infoW, n.up, n.upW, n.goR, n.goW, n.resolv} {
		if f != nil {
			f.Close()
		}
	}
}

// hostHasIPv6Route tells whether the host has an IPv6 default route.
func hostHasIPv6Route() bool {
	data, err := os.ReadFile("/proc/net/ipv6_route")
	if err != nil {
		return false
	}
	for l := range strings.Lines(string(data)) {
		f := strings.Fields(l)
		if len(f) == 10 && f[0] == strings.Repeat("0", 32) && f[1] == "00" && f[9] != "lo" {
			return true
		}
	}
	return false
}
