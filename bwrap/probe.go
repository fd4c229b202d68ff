package bwrap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Status is what Probe found.
type Status struct {
	Path    string // the bwrap executable, "" when missing
	Version string // "bubblewrap 0.8.0"
	// Usable is true when a trivial command ran in the sandbox.
	Usable bool
	// Problem says what is wrong and how to fix it, when not Usable.
	Problem string
	// Slow is true when the trivial command did not finish within
	// ProbeTimeout: the machine was too busy, which says nothing about
	// the sandbox, so a caller probes again rather than keep the answer.
	Slow bool
	// Network is the helper that connects the network namespace of a
	// network: true sandbox (slirp4netns's or pasta's path, as the
	// Runner's NetworkHelper chooses), "" when there is none.
	Network string
	// NetworkProblem says why network: true cannot work here and how to
	// fix it; "" when it can.
	NetworkProblem string
}

// ProbeTimeout bounds the trivial command Probe runs. A sandbox's start
// is milliseconds, but its init is this binary, which a loaded small
// board or an emulator (qemu-user runs it for a foreign architecture)
// takes seconds to start: a refusal comes back at once whatever the bound,
// and only a hang waits it out.
const ProbeTimeout = 30 * time.Second

// probeTimeout is ProbeTimeout; tests shorten it.
var probeTimeout = ProbeTimeout

// Probe checks that bwrap is installed and can create its namespaces
// here, and finds the network helper auto would choose.
func Probe(ctx context.Context) Status { return (&Runner{}).Probe(ctx) }

// Probe checks that r's bwrap is installed and can create its namespaces
// here, and finds r's network helper.
func (r *Runner) Probe(ctx context.Context) Status {
	var st Status
	st.Network, st.NetworkProblem = probeNet(r.NetworkHelper)
	bin := r.Bwrap
	if bin == "" {
		bin = "bwrap"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		st.Problem = "bubblewrap is not installed: install it with \"sudo apt-get install bubblewrap\""
		return st
	}
	st.Path = path
	ctx, cancel := context.WithTimeout(ctx, probeTimeout+5*time.Second)
	defer cancel()
	version := exec.CommandContext(ctx, path, "--version")
	version.Env = hostEnv
	if out, err := version.Output(); err == nil {
		st.Version = strings.TrimSpace(string(out))
	}
	res, err := (&Runner{Bwrap: path, Init: r.Init}).Run(ctx, Policy{Limits: Limits{Timeout: probeTimeout}}, []string{"true"}, nil)
	switch {
	case err != nil:
		st.Problem = err.Error()
	case res.TimedOut:
		st.Slow = true
		st.Problem = fmt.Sprintf("bubblewrap did not run a trivial command within %s: the machine is too busy, or the sandbox's start hangs; "+
			"it is tried again at the next tool call, and \"agnx-lite doctor\" checks it", probeTimeout)
	case res.ExitCode != 0:
		st.Problem = namespaceHint(string(res.Output))
	default:
		st.Usable = true
	}
	return st
}

// namespaceHint turns bwrap's complaint into the fix.
func namespaceHint(out string) string {
	out = strings.TrimSpace(out)
	if strings.Contains(out, "namespace") || strings.Contains(out, "Operation not permitted") {
		fix := "enable unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1, " +
			"or on Ubuntu 24.04+ an AppArmor profile for bwrap)"
		if _, err := os.Stat("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); errors.Is(err, os.ErrNotExist) {
			fix = "enable unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1 " +
				"or user.max_user_namespaces > 0)"
		}
		return fmt.Sprintf("bubblewrap cannot create its sandbox (%s): %s", out, fix)
	}
	if out == "" {
		return "bubblewrap cannot create its sandbox and said nothing: run \"bwrap --ro-bind / / true\" to see why"
	}
	return fmt.Sprintf("bubblewrap cannot create its sandbox: %s", out)
}

// probeNet finds the network helper and the tun device it needs,
// without starting a sandbox: most agents never ask for the network.
func probeNet(choice string) (helper, problem string) {
	helper, err := lookNet(choice)
	if err != nil {
		return "", netHelp(choice)
	}
	if err := syscall.Access("/dev/net/tun", 6); err != nil { // read and write
		return helper, fmt.Sprintf("network: true cannot work: %s needs /dev/net/tun (%v): "+
			"load the tun module (sudo modprobe tun), and under systemd do not set PrivateDevices=yes", filepath.Base(helper), err)
	}
	return helper, ""
}
