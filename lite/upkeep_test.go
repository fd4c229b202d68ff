package lite

import (
	"bytes"
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/upkeep"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// The memory guard and retention (lite/upkeep) as the App wires them: the
// packages' own tests drive them with fakes, these with the App's loop,
// agent cache and agent files.

// guardedApp is an App without a guard of its own (the test drives one)
// and a session of its default agent, on a fake Ollama.
func guardedApp(t *testing.T) (*App, runtime.SessionInfo) {
	t.Helper()
	return guardedAppWith(t, nil)
}

// guardedAppWith is guardedApp opened with o.
func guardedAppWith(t *testing.T, o *Options) (*App, runtime.SessionInfo) {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, o)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	info, err := app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	return app, info
}

// appGuard is a guard of limitMB over app's loop and agent cache, as Open
// makes one, that reads its anonymous memory from anon.
func appGuard(app *App, limitMB int, anon func() (int64, error)) *upkeep.Guard {
	return upkeep.NewGuard(upkeep.GuardOptions{LimitMB: limitMB, Reserve: agentcache.Reserve,
		Loop: app.Loop, Agents: upkeepAgents{app.Agents}, Anon: anon, Logger: app.log})
}

// App.Close stops the guard, waits for it, and puts the Go memory limit
// back as it was.
func TestMemGuard_StopsWithApp(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 8 << 10 // high enough not to slow other tests
	_, err := config.Init(cfg)
	require.NoError(t, err)
	before := debug.SetMemoryLimit(-1)
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	require.NotNil(t, app.guard)
	assert.Equal(t, int64(8<<30), debug.SetMemoryLimit(-1), "Open started the guard: its limit is in force")
	require.NoError(t, app.Close())
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, app.guard.Stop(expired), "Close returned before the guard's goroutine")
	assert.Equal(t, before, debug.SetMemoryLimit(-1))
}

// retentionApp is an app whose config ends sessions idle a day, with
// agents forever (ttl_hours: 0) and brief (ttl_hours: 1) beside the
// default assistant.
func retentionApp(t *testing.T) *App {
	t.Helper()
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Sessions.TTLHours = 24
	tmpl, err := os.ReadFile(filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml"))
	require.NoError(t, err)
	for name, extra := range map[string]string{"forever": "    ttl_hours: 0\n", "brief": "    ttl_hours: 1\n"} {
		y := strings.Replace(string(tmpl), "name: assistant", "name: "+name, 1)
		y = strings.Replace(y, "  session:\n", "  session:\n"+extra, 1)
		dir := filepath.Join(cfg.AgentsDir, name)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(y), 0o600))
		for _, f := range []string{"SOUL.md", "INSTRUCTIONS.md"} {
			data, err := os.ReadFile(filepath.Join(cfg.AgentsDir, "assistant", f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o600))
		}
	}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	return app
}

func status(t *testing.T, app *App, sid string) runtime.SessionStatus {
	t.Helper()
	info, err := app.Loop.Session(context.Background(), sid)
	require.NoError(t, err)
	return info.Status
}

// TestRetention_TTL moves the App's sweep's clock: a session idle past its
// ttl ends (timeout), one of an agent with ttl_hours 0 never does, an
// agent's own ttl (its agent.yaml) wins over agnx.yaml's, a chat whose
// session ended gets a fresh one, and /metrics counts the ends.
func TestRetention_TTL(t *testing.T) {
	app := retentionApp(t)
	ctx := context.Background()
	create := func(agent string) string {
		info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: "test"})
		require.NoError(t, err)
		return info.ID
	}
	plain, forever, brief := create("assistant"), create("forever"), create("brief")
	in := agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"}
	chat, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)

	r := app.retain // its timer runs in Serve only
	now := time.Now()
	r.Sweep(ctx, now.Add(2*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, brief), "the agent's 1 h wins")
	assert.Equal(t, runtime.SessionActive, status(t, app, plain), "agnx.yaml's day has not passed")

	r.Sweep(ctx, now.Add(48*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, plain))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, chat))
	assert.Equal(t, runtime.SessionActive, status(t, app, forever), "ttl_hours 0 is never")
	r.Sweep(ctx, now.Add(10_000*time.Hour))
	assert.Equal(t, runtime.SessionActive, status(t, app, forever))
	assert.Equal(t, int64(3), r.Totals().Expired)

	// The chat's next message starts a fresh session, as /reset does.
	fresh, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)
	assert.NotEqual(t, chat, fresh)
	ad, err := app.Chats().Admit(ctx, in, true)
	require.NoError(t, err)
	assert.Equal(t, fresh, ad.Session)
	live, _, err := app.Chats().Live(ctx, "telegram", "7")
	require.NoError(t, err)
	assert.Equal(t, fresh, live)

	var metrics bytes.Buffer
	app.WriteMetrics(&metrics)
	assert.Contains(t, metrics.String(), "agnx_sessions_expired_total 3\n")
}
