package sandbox

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The model's bash, granted the network, reaches neither the daemon's API
// (a listener on the host's loopback) nor the daemon's secrets.
func TestTools_BashNetworkStaysOffTheDaemon(t *testing.T) {
	needSandbox(t)
	if _, err := exec.LookPath("pasta"); err != nil {
		if _, err := exec.LookPath("slirp4netns"); err != nil {
			t.Skip("network: true needs pasta (sudo apt-get install passt)")
		}
	}
	t.Setenv("AGNX_TEST_TELEGRAM_BOT_TOKEN", "123456:daemon-secret-token")
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("REACHED")) }))
	defer api.Close()
	u, _ := url.Parse(api.URL)
	a := toolAgent(t, "bwrap", "    - {type: builtin, name: bash, network: true}\n", nil)
	res := call(t, a, "bash", `{"command":"timeout 3 bash -c 'exec 3<>/dev/tcp/`+u.Hostname()+`/`+u.Port()+
		` && printf \"GET / HTTP/1.0\\r\\n\\r\\n\" >&3 && cat <&3'; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; echo checked"}`)
	assert.Contains(t, res.Content, "checked", "the command ran")
	assert.NotContains(t, res.Content, "REACHED", "the daemon's port is out of reach")
	assert.NotContains(t, res.Content, "daemon-secret-token")
}
