package plugin_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func notice(t *testing.T, e *env, sid, text string) {
	t.Helper()
	_, err := e.app.Loop.Notice(context.Background(), sid, runtime.Notice{Content: text, Origin: "schedule:s1"})
	require.NoError(t, err)
}

// A notice committed to the chat's session reaches the chat once Follow
// is called, as a message of its own after the turn's answer; a Follow
// before the commit, with nothing unseen, opens nothing.
func TestFollow_NoticeReachesChatOnce(t *testing.T) {
	m := newSlowModel(t, "hi")
	e := newEnvWith(t, m.handler())
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "polite", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_SAY=hi", "AGNX_HELPER_EXIT_AFTER=2")
	m.waitAsked(t) // the chat has its session
	sid, _, err := e.app.Chats().Current("helper", "c1")
	require.NoError(t, err)
	m.release()
	waitTurns(t, e.app.Loop, sid, 1)
	ctx := context.Background()
	require.NoError(t, g.Follow(ctx, sid, "c1"), "nothing to deliver yet")
	// Refusals first: once the notice is committed the turn's own watcher
	// may deliver it, and the helper exits after that second message.
	other, err := e.app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "http"})
	require.NoError(t, err)
	notice(t, e, other.ID, "not for the chat")
	require.ErrorContains(t, g.Follow(ctx, other.ID, "c1"), "a chat is delivered only its own sessions")
	require.ErrorContains(t, g.Follow(ctx, sid, "c2"), "a chat is delivered only its own sessions")
	notice(t, e, sid, "reminder: tea")
	if err := g.Follow(ctx, sid, "c1"); err != nil {
		// The turn's own watcher may still follow the session and deliver
		// the notice first (a slow machine, an emulator): the helper then
		// exits after its second message and the gateway is stopped.
		require.ErrorContains(t, err, "stopped")
	}
	waitDone(t, g) // the helper exits after its second message
	assert.Equal(t, []string{"echo: hi", "reminder: tea"}, readLines(out))
}

// A notice committed to a session of the chat that the plugin never
// followed, when the daemon stops before Follow (a crash between the two),
// is delivered at the next start, and once only.
func TestFollow_UnfollowedNoticeDeliveredAtStartOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := agents.Inbound{Gateway: "helper", ChatType: "private", ChatID: "c1", SenderID: "u1"}
	sid, err := e.app.Chats().NewSession(ctx, in, "assistant")
	require.NoError(t, err)
	notice(t, e, sid, "reminder: tea")
	e.reopen(t)
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "polite", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_EXIT_AFTER=1")
	waitDone(t, g)
	assert.Equal(t, []string{"reminder: tea"}, readLines(out))

	e.reopen(t)
	g = e.start(t, "polite", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out)
	e.next(t, plugin.StateReady)
	require.NoError(t, g.Stop(ctx))
	assert.Equal(t, []string{"reminder: tea", "<shutdown>"}, readLines(out), "nothing is sent twice")
}

// A stopped gateway refuses Follow at once.
func TestFollow_StoppedGateway(t *testing.T) {
	e := newEnv(t)
	g := e.start(t, "polite", plugin.RestartNever, fast)
	e.next(t, plugin.StateReady)
	require.NoError(t, g.Stop(context.Background()))
	assert.Error(t, g.Follow(context.Background(), "s1", "c1"))
}

// A notice that arrives while the chat's turn runs is sent as it comes,
// and is not taken for the turn's answer.
func TestFollow_NoticeDuringTurn(t *testing.T) {
	m := newSlowModel(t, "slow question")
	e := newEnvWith(t, m.handler())
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "polite", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_SAY=slow question", "AGNX_HELPER_EXIT_AFTER=2")
	m.waitAsked(t)
	sid, _, err := e.app.Chats().Current("helper", "c1")
	require.NoError(t, err)
	notice(t, e, sid, "reminder: tea")
	require.NoError(t, g.Follow(context.Background(), sid, "c1"), "followed already: nothing more")
	m.release()
	waitDone(t, g)
	assert.Equal(t, []string{"reminder: tea", "echo: slow question"}, readLines(out))
}
