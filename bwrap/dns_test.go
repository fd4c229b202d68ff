package bwrap

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSandboxResolv(t *testing.T) {
	for name, c := range map[string]struct{ host, want string }{
		"systemd-resolved": {"# stub\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n",
			"nameserver 10.0.2.3\noptions edns0 trust-ad\nsearch lan\n"},
		"dnsmasq and another": {"nameserver 127.0.0.1\nnameserver 192.0.2.1\n", "nameserver 10.0.2.3\n"},
		"IPv6 loopback":       {"nameserver ::1\n", "nameserver 10.0.2.3\n"},
		"unspecified":         {"nameserver 0.0.0.0\n", "nameserver 10.0.2.3\n"},
		"reachable resolvers": {"nameserver 192.0.2.1\nnameserver 2001:db8::1\nsearch lan\n", ""},
		"none":                {"search lan\n", ""},
	} {
		got := sandboxResolv([]byte(c.host), slirpDNS)
		if c.want == "" {
			assert.Nil(t, got, name)
			continue
		}
		assert.Contains(t, string(got), c.want, name)
		assert.NotContains(t, string(got), "127.0.0", name)
	}
	long := "nameserver 127.0.0.53\n"
	for range 1000 {
		long += "options ndots:1\n"
	}
	assert.Less(t, len(sandboxResolv([]byte(long), pastaDNS)), maxResolv+1, "it fits a pipe's buffer")
}

// dnsChildEnv makes the re-executed test binary run TestRun_NetworkDNS's
// sandboxes, in a mount namespace where the host's /etc/resolv.conf names
// the resolver this variable gives.
const dnsChildEnv = "AGNX_BWRAP_TEST_DNS_RESOLVER"

// A host whose resolver is on its loopback (systemd-resolved, dnsmasq)
// still gives a network sandbox DNS, through the helper's forwarder; the
// forwarder reaches the resolver's port 53 and no other port of the
// host's loopback. The host's resolv.conf is replaced for a child of this
// test only, in a mount namespace of its own (root only).
func TestRun_NetworkDNS(t *testing.T) {
	if resolver := os.Getenv(dnsChildEnv); resolver != "" {
		dnsInside(t, resolver)
		return
	}
	sandbox(t)
	skipWithoutNet(t)
	if os.Geteuid() != 0 {
		t.Skip("replacing the host's resolv.conf in a mount namespace needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	// An address of the loopback no other test run uses, as 127.0.0.53 is
	// systemd-resolved's.
	resolver := "127.53." + strconv.Itoa(os.Getpid()>>8&255) + "." + strconv.Itoa(1+os.Getpid()%250)
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	require.NoError(t, os.WriteFile(conf, []byte("nameserver "+resolver+"\noptions timeout:2 attempts:2\n"), 0o644))
	self, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
		`mount --bind "$1" /etc/resolv.conf && exec "$2" -test.run='^TestRun_NetworkDNS$' -test.v -test.count=1`,
		"sh", conf, self)
	child.Env = append(os.Environ(), dnsChildEnv+"="+resolver)
	out, err := child.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, name := range []string{Slirp4netns, Pasta} {
		if _, err := exec.LookPath(name); err == nil {
			assert.Contains(t, string(out), "--- PASS: TestRun_NetworkDNS/"+name, "%s", out)
		}
	}
}

// dnsInside runs TestRun_NetworkDNS's sandboxes, with each helper, as the
// daemon's user and as a root daemon's sandbox user.
func dnsInside(t *testing.T, resolver string) {
	r, ws := sandbox(t)
	serveDNS(t, resolver)
	other := listen(t, resolver+":0")  // another port of the resolver's address
	daemon := listen(t, "127.0.0.1:0") // the daemon's API, say
	eachHelper(t, r, func(t *testing.T) {
		helper, err := lookNet("") // the only one on PATH
		require.NoError(t, err)
		fwd := dnsForward(helper)
		resolve := "getent hosts test.example; echo getent=$?; cat /etc/resolv.conf; "
		res, err := r.Run(context.Background(), Policy{Workspace: ws, Network: true}, []string{"/bin/bash", "-c",
			resolve + dial(fwd, other.Port) + dial(fwd, daemon.Port) + dial(resolver, other.Port)}, nil)
		require.NoError(t, err)
		out := string(res.Output)
		assert.Regexp(t, `192\.0\.2\.53\s+test\.example`, out, "the name resolves through the helper's forwarder")
		assert.Contains(t, out, "nameserver "+fwd)
		assert.NotContains(t, out, "REACHED", "the forwarder reaches nothing else of the host's loopback")
		assert.Contains(t, out, resolver+":", "the checks ran")

		// A root daemon's sandbox user reads the resolv.conf too.
		p := Policy{Workspace: ws, Network: true, RunAs: &User{UID: 65534, GID: 65534}}
		res, err = r.Run(context.Background(), p, []string{"/bin/bash", "-c", resolve + "id -u"}, nil)
		require.NoError(t, err)
		assert.Regexp(t, `192\.0\.2\.53\s+test\.example`, string(res.Output))
		assert.Contains(t, string(res.Output), "65534")
	})
}

// serveDNS answers every query for an A record on addr, UDP port 53,
// with 192.0.2.53 (and any other with no record) until the test ends.
func serveDNS(t *testing.T, addr string) {
	pc, err := net.ListenPacket("udp4", net.JoinHostPort(addr, "53"))
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := dnsAnswer(buf[:n]); reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
}

// dnsAnswer is the reply to query, in DNS's wire format (RFC 1035 4.1):
// the header and question echoed, then one A record pointing back at the
// question's name; nil for what is not a query of one question.
func dnsAnswer(query []byte) []byte {
	if len(query) < 12 || query[2]&0x80 != 0 || query[4] != 0 || query[5] != 1 {
		return nil
	}
	end := 12
	for end < len(query) && query[end] != 0 {
		end += int(query[end]) + 1
	}
	end += 5 // the root label, QTYPE and QCLASS
	if end > len(query) {
		return nil
	}
	reply := append([]byte(nil), query[:end]...)
	reply[2], reply[3] = 0x81, 0x80             // a response; recursion desired and available; no error
	clear(reply[6:12])                          // no answer, authority or additional record yet
	if query[end-4] == 0 && query[end-3] == 1 { // QTYPE A
		reply[7] = 1
		reply = append(reply, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 53) // name at 12, A, IN, TTL 60
	}
	return reply
}
