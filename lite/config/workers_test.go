package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/workers"
)

func TestParse_Workers(t *testing.T) {
	t.Setenv("WORKER_TOKEN", "tok-123")
	c, err := Parse("agnx.yaml", []byte(`workers:
  claude:
    acp: [claude-code-acp, --verbose]
    env: {ANTHROPIC_API_KEY: "${WORKER_TOKEN}"}
  claude-headless:
    claude: /usr/local/bin/claude
    args: [--model, sonnet]
    network: true
    timeout: 2h
    max_retries: 0
    sandbox: trust
`))
	require.NoError(t, err)
	acp := c.Workers["claude"]
	assert.Equal(t, []string{"claude-code-acp", "--verbose"}, acp.ACP)
	assert.Equal(t, 30*time.Minute, acp.RunTimeout)
	assert.Equal(t, 2, acp.Retries)
	assert.Equal(t, "bwrap", acp.Sandbox)
	assert.Equal(t, "tok-123", acp.Env["ANTHROPIC_API_KEY"])
	h := c.Workers["claude-headless"]
	assert.Equal(t, 2*time.Hour, h.RunTimeout)
	assert.Equal(t, 0, h.Retries)
	assert.True(t, h.Network)
	assert.Equal(t, "trust", h.Sandbox)
	assert.Empty(t, c.Warnings)
}

func TestParse_WorkerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"both", "workers:\n  w:\n    acp: [a]\n    claude: claude\n",
			"agnx.yaml:2: workers.w has both acp and claude: keep one"},
		{"neither", "workers:\n  w:\n    network: true\n",
			"agnx.yaml:2: workers.w needs acp (the argv of an ACP agent"},
		{"bad name", "workers:\n  Big_W:\n    claude: claude\n",
			`agnx.yaml:2: worker name "Big_W" may contain only a-z, 0-9, _ and -, at most 32 of them`},
		{"short timeout", "workers:\n  w:\n    claude: claude\n    timeout: 5s\n",
			`agnx.yaml:4: workers.w.timeout "5s" must be a duration from 10s to 24h, e.g. 30m`},
		{"long timeout", "workers:\n  w:\n    claude: claude\n    timeout: 25h\n",
			`agnx.yaml:4: workers.w.timeout "25h" must be a duration from 10s to 24h`},
		{"retries", "workers:\n  w:\n    claude: claude\n    max_retries: 6\n",
			"agnx.yaml:4: workers.w.max_retries 6 is out of range 0..5"},
		{"sandbox", "workers:\n  w:\n    claude: claude\n    sandbox: docker\n",
			`agnx.yaml:4: workers.w.sandbox "docker" must be bwrap or trust`},
		{"relative program", "workers:\n  w:\n    acp: [./bin/agent]\n",
			"agnx.yaml:3: workers.w.acp must name a program on PATH or by its absolute path"},
		{"args with acp", "workers:\n  w:\n    acp: [agent]\n    args: [-x]\n",
			"agnx.yaml:4: workers.w.args is for claude"},
		{"env name", "workers:\n  w:\n    claude: claude\n    env: {1BAD: x}\n",
			`agnx.yaml:4: workers.w.env name "1BAD" must be letters, digits and _`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("agnx.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// FuzzConfigWorkers: no workers: section panics the loader; a refusal is
// one line at a line of the file; an accepted one validates again.
func FuzzConfigWorkers(f *testing.F) {
	f.Add([]byte("workers:\n  claude:\n    acp: [claude-code-acp]\n  h:\n    claude: claude\n    args: [--model, sonnet]\n" +
		"    network: true\n    timeout: 45m\n    max_retries: 3\n    env: {K: v}\n    sandbox: trust\n"))
	f.Add([]byte("workers:\n  w:\n    acp: []\n    claude: ''\n"))
	f.Add([]byte("workers: [a, b]\n"))
	f.Add([]byte("workers:\n  w:\n    claude: c\n    timeout: -1s\n    max_retries: -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("agnx.yaml", data)
		if err == nil {
			require.NoError(t, c.Validate(), "an accepted config validates again")
			for name, e := range c.Workers {
				assert.True(t, workers.ValidName(name))
				assert.GreaterOrEqual(t, e.RunTimeout, workers.MinTimeout)
			}
			return
		}
		var e *agents.Error
		require.ErrorAs(t, err, &e)
		assert.NotContains(t, e.Msg, "\n")
	})
}
