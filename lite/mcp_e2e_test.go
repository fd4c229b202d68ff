package lite

import (
	"bytes"
	"context"
	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// toolThenAnswer is a fake model that calls tool with args, then answers
// with what the tool returned.
func toolThenAnswer(tool, args string) llmtest.Handler {
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Reply{Text: "the tool said: " + last.Content}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: tool, Arguments: args}}}
	}
}

// A turn in the daemon calls an agent's stdio MCP server, started in its
// sandbox on first use, and the model gets the result; the server's calls
// show in /metrics and serve status. A second daemon on the same data dir
// builds the agent from the cached tool list without starting the server.
func TestMCP_TurnCallsAServerTool(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, toolThenAnswer("probe__echo", `{"text": "hi"}`))
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := mcpTestConfig(t)
	t.Log("sandbox:", cfg.Sandbox.Mode)
	setSpec(t, cfg.AgentsDir+"/assistant", "  tools:\n    - {type: mcp, name: probe, command: "+mcpServerBinary(t)+"}\n")

	app, err := Open(cfg, nil)
	require.NoError(t, err)
	require.NoError(t, turn(t, app, "assistant", "echo hi"))
	reqs := fake.Requests()
	require.Len(t, reqs, 2, "the tool call, then the answer")
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	assert.Contains(t, offered, "probe__echo")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, "tool", last.Role)
	assert.Contains(t, last.Content, "echo: hi")

	var m bytes.Buffer
	app.WriteMetrics(&m)
	assert.Contains(t, m.String(), `agnx_tool_calls_total{kind="mcp",tool="probe__echo",outcome="ok"} 1`)
	assert.Regexp(t, `agnx_mcp_calls_total\{agent="assistant",server="probe"\} [1-9]`, m.String())
	assert.Contains(t, m.String(), `agnx_mcp_failures_total{agent="assistant",server="probe"} 0`)
	assert.Contains(t, m.String(), `agnx_mcp_server_running{agent="assistant",server="probe"} 1`)
	st := app.MCPServers()
	require.Len(t, st, 1)
	assert.Equal(t, "running", st[0].State)
	assert.Positive(t, st[0].RSSBytes, "the server's own memory")
	assert.Positive(t, app.RSS())
	require.NoError(t, app.Close())
	for _, s := range app.MCPStats() {
		assert.False(t, s.Running, "Close stops every server")
	}

	// mcp list reads the daemon's cache when the daemon is not running.
	spec, err := agents.Load(filepath.Join(cfg.AgentsDir, "assistant"))
	require.NoError(t, err)
	probe, err := doctor.OpenMCPProbe(cfg, spec, true, nil)
	require.NoError(t, err)
	ts, warns, err := probe.Tools(context.Background(), "probe")
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.True(t, hasTool(ts, "probe__echo"))
	for _, s := range probe.Stats() {
		assert.False(t, s.Running, "the cached list: nothing started")
	}
	probe.Close()

	again, err := Open(cfg, nil)
	require.NoError(t, err)
	defer again.Close()
	a, err := again.Agents.LoadAgent("assistant")
	require.NoError(t, err)
	assert.True(t, hasTool(a.Tools, "probe__echo"), "the tool comes from the cached list")
	for _, s := range again.MCPStats() {
		assert.False(t, s.Running, "nothing started: the list was cached")
	}
}

func hasTool(ts []runtime.Tool, name string) bool {
	for _, t := range ts {
		if t.Spec().Name == name {
			return true
		}
	}
	return false
}

// An evicted agent's MCP servers are stopped and forgotten; an agent
// without MCP servers never makes the manager.
func TestMCP_EvictionStopsTheServers(t *testing.T) {
	cfg := cachetest.Init(t)
	cfg.Runtime.MaxLoadedAgents = 1
	_, err := agents.WriteTemplate(cfg.AgentsDir, "other")
	require.NoError(t, err)
	c := cacheOver(cfg, nil)
	defer func() { c.Close() }()
	_, err = c.LoadAgent("other")
	require.NoError(t, err)
	assert.Nil(t, c.Tools().MCP().Started(), "no MCP server: no manager")

	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  tools:\n    - {type: mcp, name: probe, command: "+mcpServerBinary(t)+"}\n")
	if !bwrap.Probe(context.Background()).Usable {
		c = withTools(c, cfg, sandboxMode("trust"))
	}
	a, err := c.LoadAgent("assistant")
	require.NoError(t, err)
	require.True(t, hasTool(a.Tools, "probe__add"), a.Spec.Warnings)
	stats := c.Tools().MCP().Stats()
	require.Len(t, stats, 1)
	require.True(t, stats[0].Running, "listed by starting it: nothing was cached")
	pid := stats[0].PID

	_, err = c.LoadAgent("other") // evicts assistant
	require.NoError(t, err)
	assert.Empty(t, c.Tools().MCP().Stats(), "forgotten")
	assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"the server's process ends")
}
