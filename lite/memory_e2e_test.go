package lite

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

// The daemon's memory end to end: a turn remembers; after a restart a
// turn's recall with a query finds it, citing the daily file, and so do
// the HTTP route and SearchMemory (what `memory search` uses) — both over
// the past session's messages too.
func TestMemory_RememberRestartRecall(t *testing.T) {
	cfg := mcpTestConfig(t)
	setSpec(t, cfg.AgentsDir+"/assistant", "  memory: {backend: filesystem}\n")

	remember := llmtest.NewHandler(t, llmtest.Ollama,
		toolThenAnswer("memory", `{"action": "remember", "content": "The wifi password is hunter2-lighthouse."}`))
	t.Setenv("OLLAMA_HOST", remember.BaseURL())
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	require.NoError(t, turn(t, app, "assistant", "remember the wifi password: hunter2-lighthouse"))
	assert.Contains(t, lastToolResult(t, remember), "Remembered. Written to")
	require.NoError(t, app.Close())

	recall := llmtest.NewHandler(t, llmtest.Ollama,
		toolThenAnswer("memory", `{"action": "recall", "query": "wifi password"}`))
	t.Setenv("OLLAMA_HOST", recall.BaseURL())
	app, err = Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	require.NoError(t, turn(t, app, "assistant", "what is the wifi password?"))
	got := lastToolResult(t, recall)
	assert.Contains(t, got, "hunter2-lighthouse")
	assert.Contains(t, got, "memory/daily/", "the hit cites its file")

	res, err := app.SearchMemory(context.Background(), "assistant", memory.Query{Text: "lighthouse"})
	require.NoError(t, err)
	sources := map[string]bool{}
	for _, h := range res.Hits {
		sources[h.Source[:min(len(h.Source), 8)]] = true
	}
	assert.True(t, sources["memory/d"], "the daily file: %+v", res.Hits)
	assert.True(t, sources["session "], "the first conversation's message: %+v", res.Hits)

	srv := httptest.NewServer(httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app}, SearchMemory: app.searchMemoryAPI}))
	defer srv.Close()
	c := httpapi.NewClient(srv.URL, httpapi.ClientOptions{})
	hr, err := c.SearchMemory(context.Background(), "assistant", "hunter2", 3)
	require.NoError(t, err)
	assert.Equal(t, "keyword", hr.Mode)
	require.NotEmpty(t, hr.Hits)
	assert.LessOrEqual(t, len(hr.Hits), 3)
	_, err = c.SearchMemory(context.Background(), "nobody", "x", 0)
	var pe *httpapi.ProblemError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 404, pe.Status)
	setSpec(t, cfg.AgentsDir+"/assistant", "")
	_, err = c.SearchMemory(context.Background(), "assistant", "x", 0)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 409, pe.Status)
	assert.Contains(t, pe.Detail, "memory: {backend: filesystem}")
}

// lastToolResult is the tool result the fake model got last.
func lastToolResult(t *testing.T, h *llmtest.Server) string {
	t.Helper()
	reqs := h.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[len(reqs)-1].Messages
	last := msgs[len(msgs)-1]
	require.Equal(t, "tool", last.Role)
	return last.Content
}
