package lite

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func TestMetrics(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "use list_dir {}"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}

	var b bytes.Buffer
	app.WriteMetrics(&b)
	out := b.String()
	for _, want := range []string{
		`agnx_turns_total{agent="assistant",outcome="completed"} 1`,
		`agnx_tool_calls_total{kind="builtin",tool="list_dir",outcome="ok"} 1`,
		`agnx_model_calls_total{provider="ollama",outcome="ok"} 2`,
		`agnx_model_call_seconds_count{provider="ollama"} 2`,
		`agnx_model_call_seconds_bucket{provider="ollama",le="+Inf"} 2`,
		`agnx_sessions_resident 1`,
		`agnx_agents_loaded 1`,
		`agnx_agent_builds_total 1`,
		`agnx_agent_evictions_total{reason="memory"} 0`,
		`agnx_agents_held_bytes 0`,
		`agnx_tools_stuck 0`,
		`agnx_turns_parked 0`,
		`agnx_loop_queue_depth 0`,
		"# TYPE agnx_turns_total counter",
		"# TYPE agnx_model_call_seconds histogram",
	} {
		assert.Contains(t, out, want+"\n")
	}
	assert.Regexp(t, `agnx_tokens_total\{agent="assistant",kind="prompt"\} [1-9]`, out)
	assert.Regexp(t, `agnx_resident_memory_bytes [1-9]`, out)
	assert.Regexp(t, `agnx_goroutines [1-9]`, out)
	assert.Regexp(t, `agnx_tokens_total\{agent="assistant",kind="prompt"\} [1-9]`, out)
	line := regexp.MustCompile(`^[a-z_]+(\{([a-z_]+="[^"]*",?)+\})? [-+0-9.eInf]+$`)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "#") {
			assert.Regexp(t, line, l)
		}
	}
}

// Prompt-cache and reasoning tokens are counted apart, only for agents
// whose provider reports them; cost only for priced models.
func TestMetrics_CacheTokens(t *testing.T) {
	m := newMetrics(map[string]runtime.Price{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}})
	m.UsageRecorded(runtime.UsageRecord{Agent: "claude", Model: "claude-sonnet-4-5",
		Usage: runtime.Usage{PromptTokens: 100, CompletionTokens: 5, CacheReadTokens: 80, CacheWriteTokens: 15}})
	m.UsageRecorded(runtime.UsageRecord{Agent: "local", Model: "o3-mini", Usage: runtime.Usage{PromptTokens: 10, CompletionTokens: 7, ReasoningTokens: 4}})
	m.TurnEnded("claude", "completed", time.Second, runtime.Usage{PromptTokens: 100, CompletionTokens: 5})
	assert.Equal(t, uint64(100), m.tokens[[2]string{"claude", "prompt"}], "a turn's end does not count its calls again")
	assert.Equal(t, uint64(80), m.tokens[[2]string{"claude", "cache_read"}])
	assert.Equal(t, uint64(15), m.tokens[[2]string{"claude", "cache_write"}])
	assert.Equal(t, uint64(4), m.tokens[[2]string{"local", "reasoning"}])
	_, ok := m.tokens[[2]string{"local", "cache_read"}]
	assert.False(t, ok)
	assert.InDelta(t, (5*3+5*15+80*0.3+15*3.75)/1e6, m.cost[[2]string{"claude", "claude-sonnet-4-5"}], 1e-12)
	assert.Len(t, m.cost, 1, "unpriced models have no cost series")
}
