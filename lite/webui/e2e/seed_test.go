package e2e

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// seedSubagent stores, in the data dir the daemon will serve, a session
// and a subagent session it spawned (session_start with a spawn link, as
// the agent tool leaves one), for the session tree case. The store is
// closed again before the daemon opens it.
func seedSubagent(t *testing.T, dir string) (parent, child string) {
	cfg, err := config.Locate("", dir)
	require.NoError(t, err)
	app, err := lite.Open(cfg, &lite.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer func() { require.NoError(t, app.Close()) }()
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	p, err := app.Loop.ImportSession(ctx, []runtime.Event{
		{Type: runtime.EvSessionStart, Agent: "assistant", Time: at},
		{Type: runtime.EvUserMessage, Content: "the parent's task", Time: at},
		{Type: runtime.EvAssistant, Content: "I asked a subagent.", Time: at},
	})
	require.NoError(t, err)
	c, err := app.Loop.ImportSession(ctx, []runtime.Event{
		{Type: runtime.EvSessionStart, Agent: "guarded", Time: at.Add(time.Second),
			Spawn: &runtime.Spawn{Parent: p.ID, Call: "call_1", Depth: 1, Ceiling: []string{"assistant"}}},
		{Type: runtime.EvUserMessage, Content: "the subagent's task", Time: at.Add(time.Second)},
		{Type: runtime.EvAssistant, Content: "Done: nothing to report.", Time: at.Add(2 * time.Second)},
	})
	require.NoError(t, err)
	require.Equal(t, p.ID, c.Parent)
	return p.ID, c.ID
}
