package agentcache

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/wasmtools"
)

func lruCache(t *testing.T, max int, names ...string) *Cache {
	t.Helper()
	c, cfg := newTestCache(t)
	c.max = max
	for _, n := range names {
		_, err := agents.WriteTemplate(cfg.AgentsDir, n)
		require.NoError(t, err)
	}
	return c
}

func loaded(c *Cache) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for n := range c.loaded {
		out = append(out, n)
	}
	return out
}

func TestAgentCache_LRUAndPins(t *testing.T) {
	c := lruCache(t, 2, "a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		_, err := c.LoadAgent(n)
		require.NoError(t, err)
	}
	assert.ElementsMatch(t, []string{"b", "c"}, loaded(c), "the least recently used went")

	c.Pin("b") // b has a turn running
	_, err := c.LoadAgent("a")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, loaded(c), "the pinned agent stays though it is older")

	c.Pin("a")
	_, err = c.LoadAgent("c")
	require.NoError(t, err)
	assert.Len(t, loaded(c), 3, "with every other agent pinned the cache runs over")
	c.Unpin("a")
	c.Unpin("b")
	_, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	assert.Len(t, loaded(c), 2, "and comes back under max once turns end")

	assert.Equal(t, 2, c.EvictIdle())
	assert.Empty(t, loaded(c))
}

func TestAgentCache_EvictionReleasesWasm(t *testing.T) {
	c := lruCache(t, 1, "other")
	cachetest.EchoTool(t, filepath.Join(c.cfg.AgentsDir, "assistant", "tools", "echo"))
	defer c.Close()

	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	echo := a.Tools[len(a.Tools)-1]
	require.Equal(t, "echo", echo.Spec().Name)
	res, err := echo.Run(context.Background(), []byte(`{"x":1}`))
	require.NoError(t, err)
	assert.Equal(t, `{"x":1}`, res.Content)

	_, err = c.LoadAgent("other") // evicts assistant
	require.NoError(t, err)
	_, err = echo.Run(context.Background(), []byte(`{"x":1}`))
	assert.ErrorIs(t, err, wasmtools.ErrClosed, "the evicted agent's module was closed")
}

// A reload while a turn runs on the agent keeps the old version's modules
// open until that turn ends.
func TestAgentCache_ReloadKeepsARunningTurnsTools(t *testing.T) {
	c := lruCache(t, 2)
	cachetest.EchoTool(t, filepath.Join(c.cfg.AgentsDir, "assistant", "tools", "echo"))
	defer c.Close()

	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	echo := a.Tools[len(a.Tools)-1]
	c.Pin("assistant") // a turn runs on this version
	require.NoError(t, c.Reload("assistant"))
	_, err = echo.Run(context.Background(), []byte(`{"x":1}`))
	assert.NoError(t, err, "the running turn's tools stay open across the reload")

	c.Unpin("assistant") // the turn ends
	_, err = echo.Run(context.Background(), []byte(`{"x":1}`))
	assert.ErrorIs(t, err, wasmtools.ErrClosed, "then the old version is released")
}
