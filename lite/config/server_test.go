package config

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// A token that cannot guard the server as bound is refused when the config
// is read, with the line and how to make a real one; so are host and
// origin lists the server could not match.
func TestParse_ServerSecurity(t *testing.T) {
	t.Setenv("AGNX_TEST_PADDED", "0123456789abcdef0123\n")
	const strong = "5f0c2a9e41d7b3c8e6a1f4d2"
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"one-character token beyond loopback", "server:\n  host: 0.0.0.0\n  api_token: x\n", 3,
			"server.api_token is too short to guard 0.0.0.0: use at least 16 characters, e.g. from `openssl rand -hex 32`"},
		{"whitespace token", "server:\n  host: 0.0.0.0\n  api_token: '  '\n", 3,
			"server.api_token has spaces or line breaks around it: remove them"},
		{"padded token from the environment", "server:\n  api_token: ${AGNX_TEST_PADDED}\n", 2,
			"server.api_token has spaces or line breaks around it: remove them"},
		{"short admin token", "server:\n  host: 192.168.1.20\n  api_token: " + strong + "\n  admin_token: admin\n", 4,
			"server.admin_token is too short to guard 192.168.1.20: use at least 16 characters, e.g. from `openssl rand -hex 32`"},
		{"host with scheme", "server:\n  allowed_hosts: [pi.local, 'http://pi.local']\n", 2,
			`server.allowed_hosts[1] "http://pi.local" is not a host name or IP address: write the name alone, without scheme or port (e.g. pi.local)`},
		{"host with port", "server:\n  allowed_hosts:\n    - pi.local:8080\n", 3,
			`server.allowed_hosts[0] "pi.local:8080" is not a host name or IP address: write the name alone, without scheme or port (e.g. pi.local)`},
		{"origin without scheme", "server:\n  allowed_origins: [app.example]\n", 2,
			`server.allowed_origins[0] "app.example" is not a web origin: write scheme://host[:port] with nothing after it (e.g. https://app.example)`},
		{"origin with path", "server:\n  allowed_origins: ['https://app.example/ui']\n", 2,
			`server.allowed_origins[0] "https://app.example/ui" is not a web origin: write scheme://host[:port] with nothing after it (e.g. https://app.example)`},
		{"null origin", "server:\n  allowed_origins: ['null']\n", 2,
			`server.allowed_origins[0] "null" is not a web origin: write scheme://host[:port] with nothing after it (e.g. https://app.example)`},
		{"public agent", "server:\n  public_agents: [a/b]\n", 2,
			`server.public_agents[0] "a/b" is not a valid agent name (letters, digits and hyphens)`},
		{"negative streams", "server:\n  max_streams: -1\n", 2, "server.max_streams -1 must not be negative"},
		{"short token for a public name", "server:\n  allowed_hosts: [localhost, agnx.example.org]\n  api_token: short\n", 3,
			"server.api_token is too short to guard a server reached as agnx.example.org: use at least 16 characters, e.g. from `openssl rand -hex 32`"},
		{"short token behind a proxy", "server:\n  trusted_proxies: [127.0.0.1]\n  api_token: short\n", 3,
			"server.api_token is too short to guard a server behind server.trusted_proxies: use at least 16 characters, e.g. from `openssl rand -hex 32`"},
		{"one character repeated", "server:\n  host: 0.0.0.0\n  api_token: aaaaaaaaaaaaaaaaaaaaaaaa\n", 3,
			"server.api_token is too easy to guess (a character repeated, a run like abcd or 1234, or too few different characters) to guard 0.0.0.0: use a random one, e.g. from `openssl rand -hex 32`"},
		{"a run", "server:\n  allowed_hosts: [pi.local]\n  api_token: '1234567890123456'\n", 3,
			"server.api_token is too easy to guess (a character repeated, a run like abcd or 1234, or too few different characters) to guard a server reached as pi.local: use a random one, e.g. from `openssl rand -hex 32`"},
		{"tiny alphabet", "server:\n  host: 0.0.0.0\n  api_token: " + strong + "\n  admin_token: abababababababababab\n", 4,
			"server.admin_token is too easy to guess (a character repeated, a run like abcd or 1234, or too few different characters) to guard 0.0.0.0: use a random one, e.g. from `openssl rand -hex 32`"},
		{"proxy not an address", "server:\n  trusted_proxies: [127.0.0.1, caddy.local]\n", 2,
			`server.trusted_proxies[1] "caddy.local" is not the address or CIDR range of a proxy: write e.g. 127.0.0.1 or 10.0.0.0/8 (not every address)`},
		{"every address a proxy", "server:\n  trusted_proxies:\n    - 0.0.0.0/0\n", 3,
			`server.trusted_proxies[0] "0.0.0.0/0" is not the address or CIDR range of a proxy: write e.g. 127.0.0.1 or 10.0.0.0/8 (not every address)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("etc/agnx.yaml", []byte(tt.yaml))
			var e *agents.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, (&agents.Error{File: "etc/agnx.yaml", Line: tt.line, Msg: tt.msg}).Error(), err.Error())
		})
	}

	for _, ok := range []string{
		"server:\n  api_token: x\n", // loopback: only this machine connects
		"server:\n  host: localhost\n  admin_token: ab\n",
		"server:\n  host: 0.0.0.0\n  api_token: " + strong + "\n",
		"server:\n  api_token: aaaa\n  allowed_hosts: [localhost, 127.0.0.1, '::1']\n", // only loopback names
		"server:\n  trusted_proxies: [127.0.0.1, '10.0.0.0/8', 'fd00::/8']\n  api_token: " + strong + "\n",
		"server:\n  allowed_hosts: [pi.local, PI.LOCAL., 192.168.1.5, '[::1]', my_box]\n" +
			"  allowed_origins: ['https://app.example', 'http://localhost:3000/']\n  public_agents: [assistant]\n",
	} {
		_, err := Parse("agnx.yaml", []byte(ok))
		assert.NoError(t, err, ok)
	}
}

// The guessability estimate does not refuse random tokens, even short
// ones: 16 hex digits (64 bits), 16 characters of base64, 20 digits; nor
// passphrases people use; it refuses runs and tiny alphabets. Seeded, so
// the same tokens every run.
func TestTokenBits_RandomTokensPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alphabet := range []string{"0123456789abcdef", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "0123456789"} {
		n := 16
		if len(alphabet) == 10 {
			n = 20
		}
		for range 20000 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			require.GreaterOrEqual(t, tokenBits(string(b)), float64(minTokenBits), "%s", b)
		}
	}
	for _, ok := range []string{"5f0c2a9e41d7b3c8e6a1f4d2", "correct-horse-battery-staple", "passwordpassword", "api-token-0123456789"} {
		assert.GreaterOrEqual(t, tokenBits(ok), float64(minTokenBits), ok)
	}
	for _, weak := range []string{"aaaaaaaaaaaaaaaa", "abcdefghijklmnopqrstuvwxyz", "1234567890123456", "zyxwvutsrqponmlk",
		"abababababababab", "abcabcabcabcabcabc", "1111222233334444", "0000000000000001", ""} {
		assert.Less(t, tokenBits(weak), float64(minTokenBits), weak)
	}
}
