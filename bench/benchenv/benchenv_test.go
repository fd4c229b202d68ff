package benchenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The caller's environment stays out; PATH, the data dir, the model
// server and the benchmark's own settings go in.
func TestDaemon(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("AGNX_LITE_MEMORY_LIMIT_MB", "1")
	t.Setenv("PATH", "/usr/bin:/bin")
	assert.Equal(t, []string{"PATH=/usr/bin:/bin", "AGNX_LITE_HOME=/h", "OLLAMA_HOST=http://127.0.0.1:1", "GODEBUG=gctrace=1"},
		Daemon("/h", "http://127.0.0.1:1", "GODEBUG=gctrace=1"))
}
