package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// In the daemon: while an agent builds, a session of another agent runs a
// whole turn and the loop answers the watchdog's ping; the session being
// created waits for the build and gets the agent's error when it fails.
func TestApp_AgentBuildsOffTheLoop(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	_, err = agents.WriteTemplate(cfg.AgentsDir, "other")
	require.NoError(t, err)
	// The provider is gated once the first agent is built (gateBuilds).
	var provider atomic.Pointer[cachetest.NewProvider]
	made := cachetest.NewProvider(agentcache.NewProvider)
	provider.Store(&made)
	app, err := Open(cfg, &Options{agents: func(o *agentcache.Options) {
		o.NewProvider = func(m agents.Model) (runtime.Provider, error) { return (*provider.Load())(m) }
	}})
	require.NoError(t, err)
	defer app.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)

	gated, gate, builds, started := cachetest.GateBuilds(made)
	provider.Store(&gated)
	created := make(chan error, 2)
	for _, name := range []string{"other", "ghost"} {
		go func() {
			_, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: name})
			created <- err
		}()
	}
	<-started // other's build runs, and blocks
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hello"})
	require.NoError(t, err)
	var text string
	for e := range sub.C() {
		if e.Type == runtime.EvToken {
			text += e.Content
		}
		if e.Type == runtime.EvTurnEnd {
			assert.Equal(t, runtime.TurnCompleted, e.Reason)
			break
		}
	}
	assert.Equal(t, "echo: hello", text)
	require.NoError(t, app.Loop.Ping(ctx))

	err = <-created
	assert.ErrorIs(t, err, agentcache.ErrAgentNotFound, "a missing agent fails before its provider is made")
	assert.Contains(t, err.Error(), `create it with "agnx-lite agent create ghost"`)
	assert.Len(t, created, 0, "other still builds")
	close(gate)
	require.NoError(t, <-created)
	assert.Equal(t, int32(1), builds.Load())
}
