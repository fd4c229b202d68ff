package agentcache

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
)

// The daemon logs an agent's warnings once when it builds the agent, not
// on every use; the data dir's directives reach the prompt, and editing
// them reloads the agent.
func TestAgentCache_WarningsAndSharedDirectives(t *testing.T) {
	cfg := cachetest.Init(t)
	var logs bytes.Buffer
	c := NewStandalone(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	c.recheck = 0
	defer c.Close()
	yaml := filepath.Join(cfg.AgentsDir, "assistant", agents.FileName)
	cachetest.Edit(t, yaml, func(s string) string { return strings.Replace(s, "./INSTRUCTIONS.md", "./MISSING.md", 1) })
	shared := filepath.Join(cfg.DataDir, agents.DirectivesDir)
	require.NoError(t, os.MkdirAll(shared, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "tone.md"), []byte("Answer in English."), 0o644))

	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	_, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "spec.instructions names ./MISSING.md"), logs.String())
	assert.Contains(t, logs.String(), "level=WARN msg=\"agent warning\" agent=assistant")
	assert.Contains(t, a.Spec.RenderSystem(time.Now()), "## Directives\n- Answer in English.\n")

	tone := filepath.Join(shared, "tone.md")
	require.NoError(t, os.WriteFile(tone, []byte("Answer in French."), 0o644))
	later := a.Spec.ModTime.Add(time.Hour)
	require.NoError(t, os.Chtimes(tone, later, later))
	b, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Contains(t, b.Spec.RenderSystem(time.Now()), "- Answer in French.\n")
	assert.Equal(t, 2, strings.Count(logs.String(), "spec.instructions names ./MISSING.md"), "once per build")
}
