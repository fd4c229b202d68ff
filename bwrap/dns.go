package bwrap

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// A sandbox granted the network reads the host's /etc/resolv.conf,
// unless that names a resolver on the host's loopback (systemd-resolved's
// 127.0.0.53, a dnsmasq on 127.0.0.1): the sandbox cannot reach the host's
// loopback, so it would have no DNS. It then gets a resolv.conf of its
// own, naming the helper's DNS forwarder, which passes port 53 alone on
// to the host's first resolver:
//
//   - slirp4netns's built-in 10.0.2.3 (UDP and TCP port 53; any other
//     port there is refused under --disable-host-loopback);
//   - pasta's --dns-forward address (UDP port 53 only; anything else sent
//     there goes out to that address like any outbound packet). pasta,
//     told not to map its gateway to the host, then says "Couldn't get
//     any nameserver address" but forwards all the same.
//
// The host's search and options lines are kept.

// The addresses where the helpers answer DNS inside the sandbox.
const (
	slirpDNS = "10.0.2.3"
	pastaDNS = "169.254.1.1" // link-local, nothing on the way out has it; podman uses the same
)

// hostResolvConf is read for each sandbox: it changes as the host's
// networks come and go.
const hostResolvConf = "/etc/resolv.conf"

// maxResolv bounds the sandbox's resolv.conf, well under a pipe's buffer
// (it is written before bwrap reads it).
const maxResolv = 4 << 10

// dnsForward is where helper answers DNS inside the sandbox.
func dnsForward(helper string) string {
	if filepath.Base(helper) == Slirp4netns {
		return slirpDNS
	}
	return pastaDNS
}

// resolvPipe returns the read end of a pipe holding the sandbox's
// resolv.conf, naming fwd; nil when the host's serves as it is.
func resolvPipe(fwd string) (*os.File, error) {
	host, err := os.ReadFile(hostResolvConf)
	if err != nil {
		return nil, nil // none: bwrap binds none either (glibc then asks the loopback, in vain)
	}
	data := sandboxResolv(host, fwd)
	if data == nil {
		return nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if _, err := w.Write(data); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// sandboxResolv is the resolv.conf of a sandbox whose helper forwards DNS
// at fwd, from the host's: nil when the host's names no resolver on its
// loopback (0.0.0.0 is the loopback too, to glibc).
func sandboxResolv(host []byte, fwd string) []byte {
	var keep []string
	local := false
	for l := range strings.Lines(string(host)) {
		f := strings.Fields(l)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";"):
		case f[0] == "nameserver":
			if len(f) > 1 {
				ip, err := netip.ParseAddr(f[1])
				local = local || err == nil && (ip.IsLoopback() || ip.IsUnspecified())
			}
		default:
			keep = append(keep, strings.Join(f, " "))
		}
	}
	if !local {
		return nil
	}
	out := "# agnx-lite: the host's resolver is on its loopback, out of the sandbox's reach;\n" +
		"# the network helper forwards DNS sent here to it.\n" +
		"nameserver " + fwd + "\n"
	for _, l := range keep {
		if len(out)+len(l) < maxResolv {
			out += l + "\n"
		}
	}
	return []byte(out)
}
