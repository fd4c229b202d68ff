package lite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// A daemon that runs but does not answer its status is said so on the
// MCP server's line, not left out as if no daemon ran.
func TestDaemonMCP_SilentDaemonIsSaid(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	assert.Equal(t, daemonState{}, daemonMCP(context.Background(), cfg), "no daemon: nothing to say")

	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	data, err := json.Marshal(config.Daemon{PID: os.Getpid(), URL: broken.URL})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.DaemonFile(), data, 0o600))

	st := daemonMCP(context.Background(), cfg)
	require.Error(t, st.err)
	assert.Contains(t, st.err.Error(), "the daemon did not answer: ")
	assert.Empty(t, st.servers)
}
