package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
)

// The example plugin's messages reach the agent, and each answer comes
// back to it as send_message.
func TestGateway_ExamplePluginChats(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(in, []byte("hello\nhow are you?\n"), 0o600))
	g := e.start(t, "", plugin.RestartOnFailure, fast,
		"AGNX_EXAMPLE_INPUT="+in, "AGNX_EXAMPLE_OUTPUT="+out, "AGNX_EXAMPLE_EXIT_AFTER=2")
	e.next(t, plugin.StateReady)
	waitDone(t, g) // it exits 0 after two answers: on_failure does not restart it
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, `{"chat_id":"example-chat","content":"echo: hello"}`+"\n"+
		`{"chat_id":"example-chat","content":"echo: how are you?"}`+"\n", string(data))

	sid, agent, err := e.app.Chats().Current("example", "example-chat")
	require.NoError(t, err)
	assert.Equal(t, "assistant", agent)
	info, err := e.app.Loop.Session(t.Context(), sid)
	require.NoError(t, err)
	assert.Equal(t, 2, info.Turns)
}

// A plugin that crashes in a loop is restarted with growing waits, and
// the daemon goes on serving.
func TestGateway_CrashLoopBacksOff(t *testing.T) {
	e := newEnv(t)
	e.start(t, "crash", plugin.RestartOnFailure, fast)
	d := fast.BackoffBase
	for run := 1; run <= 5; run++ {
		s := e.next(t, plugin.StateBackoff)
		assert.Equal(t, run, s.Run)
		assert.Error(t, s.Err)
		assert.True(t, s.Wait >= d/2 && s.Wait <= d, "run %d waits %s, not in [%s, %s]", run, s.Wait, d/2, d)
		d = min(2*d, fast.BackoffMax)
	}
	e.converse(t, "still here?")
}

// restart: never leaves a crashed plugin down.
func TestGateway_RestartNeverStaysDown(t *testing.T) {
	e := newEnv(t)
	g := e.start(t, "crash", plugin.RestartNever, fast)
	assert.Equal(t, 1, e.next(t, plugin.StateStarted).Run)
	s := e.next(t, plugin.StateStopped)
	assert.Error(t, s.Err)
	waitDone(t, g)
	for len(e.states) > 0 {
		assert.NotEqual(t, plugin.StateStarted, (<-e.states).State, "no second start")
	}
}

// Invalid JSON, a line over 1 MiB, unknown types and messages without a
// chat are skipped; the valid lines around them still work, and a
// non-text message gets a sentence saying so.
func TestGateway_GarbageIsSkipped(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "garbage", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_EXIT_AFTER=2")
	waitDone(t, g)
	assert.Equal(t, []string{"Only text messages are supported here: please write your message as text.", "echo: hi"},
		readLines(out))
}

// A plugin that never says ready is killed and started again.
func TestGateway_NeverReadyIsRestarted(t *testing.T) {
	e := newEnv(t)
	timing := fast
	timing.ReadyTimeout = 100 * time.Millisecond
	e.start(t, "silent", plugin.RestartOnFailure, timing)
	first := e.next(t, plugin.StateStarted)
	s := e.next(t, plugin.StateExited)
	assert.ErrorContains(t, s.Err, "ready")
	assert.Equal(t, first.PID, s.PID)
	assert.Equal(t, 2, e.next(t, plugin.StateStarted).Run)
}

// A plugin that stops answering pings is killed and started again.
func TestGateway_NoPongIsRestarted(t *testing.T) {
	e := newEnv(t)
	timing := fast
	timing.PingInterval, timing.PongTimeout = 20*time.Millisecond, 50*time.Millisecond
	e.start(t, "nopong", plugin.RestartOnFailure, timing)
	e.next(t, plugin.StateReady)
	assert.ErrorContains(t, e.next(t, plugin.StateExited).Err, "ping")
	assert.Equal(t, 2, e.next(t, plugin.StateStarted).Run)
}

// A plugin speaking another major version keeps running (the log warns),
// as with the parent.
func TestGateway_OtherMajorVersionKeepsRunning(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "v2", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_EXIT_AFTER=1")
	e.next(t, plugin.StateReady)
	waitDone(t, g)
	assert.Equal(t, []string{"echo: still there?"}, readLines(out))
}

// auth_required and auth_success reach Observe (serve status shows them).
func TestGateway_AuthEvents(t *testing.T) {
	e := newEnv(t)
	e.start(t, "auth", plugin.RestartNever, fast)
	s := e.next(t, plugin.StateAuthRequired)
	require.NotNil(t, s.Auth)
	assert.Equal(t, plugin.AuthMethod{Method: plugin.AuthPairCode, Code: "WXYZ-0042", ExpiresIn: 60}, *s.Auth)
	e.next(t, plugin.StateAuthenticated)
	e.next(t, plugin.StateReady)
}

// The core answers /status, /compact and /reset, after the access check;
// /status starts no session.
func TestGateway_CoreCommands(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "script", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out,
		"AGNX_HELPER_SCRIPT=/status|/reset|hello|/status|/compact|/reset|again")
	waitDone(t, g)
	got := readLines(out)
	require.Len(t, got, 7)
	assert.Equal(t, "No active session.", got[0])
	assert.Equal(t, "No active session to reset.", got[1])
	assert.Equal(t, "echo: hello", got[2])
	assert.Regexp(t, `^Session: \S+\nAgent: assistant\nStatus: (active|running)\nCreated: \d{4}-\d\d-\d\d \d\d:\d\d UTC$`, got[3])
	assert.Equal(t, "Nothing to compact yet: the conversation is a single exchange.", got[4])
	assert.Equal(t, "Session reset. Send a message to start a new conversation.", got[5])
	assert.Equal(t, "echo: again", got[6], "the fresh session has no memory of hello")
}

// A sender the agent's access refuses gets the refusal, not an answer to
// /status or /reset, and no session is created.
func TestGateway_CommandsAfterAccess(t *testing.T) {
	e := newEnv(t)
	f, err := os.OpenFile(filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("  access:\n    dm: {policy: allowlist, allowlist: [\"someone-else\"]}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "script", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_SCRIPT=/status")
	waitDone(t, g)
	got := readLines(out)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "does not take direct messages from helper:u1")
	_, _, err = e.app.Chats().Current("helper", "c1")
	assert.ErrorIs(t, err, chats.ErrNoChat)
}

// A plugin that stops reading its stdin loses commands, not the daemon:
// the queue drops, and other sessions go on.
func TestGateway_DeafPluginDoesNotBlock(t *testing.T) {
	e := newEnv(t)
	timing := fast
	timing.StopGrace = 100 * time.Millisecond
	g := e.start(t, "deaf", plugin.RestartOnFailure, timing)
	e.next(t, plugin.StateDropped)
	e.converse(t, "anyone else?")
	start := time.Now()
	require.NoError(t, g.Stop(context.Background())) // shutdown cannot reach it: SIGTERM does
	assert.Less(t, time.Since(start), 5*time.Second)
}

// Stop sends shutdown, and the plugin exits on it.
func TestGateway_StopSendsShutdown(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	timing := fast
	timing.StopGrace = 10 * time.Second
	g := e.start(t, "polite", plugin.RestartAlways, timing, "AGNX_HELPER_OUT="+out)
	e.next(t, plugin.StateReady)
	start := time.Now()
	require.NoError(t, g.Stop(context.Background()))
	assert.Less(t, time.Since(start), timing.StopGrace, "it exited on shutdown, before any signal")
	assert.Equal(t, []string{"<shutdown>"}, readLines(out))
}

// An approval without buttons: the chat is asked to type /approve ID,
// the answer reaches the loop, and the tool's result comes back.
func TestGateway_ApprovalByCommand(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.cfg.AgentsDir, "assistant", "policy.yaml"),
		[]byte("apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n"), 0o644))
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "approver", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_EXIT_AFTER=3")
	waitDone(t, g)
	got := readLines(out)
	require.Len(t, got, 3)
	assert.Contains(t, got[0], "The agent wants to use list_dir")
	assert.Contains(t, got[0], "/approve ")
	// The confirmation and the turn's answer race; both come.
	assert.Contains(t, got[1:], "Allowed once.")
	assert.Contains(t, got[1]+got[2], "list_dir said: ")
}

// A sender the agent's access refuses hears why, once a minute at most;
// a group message that does not address the bot gets no answer at all.
func TestGateway_AccessRefusal(t *testing.T) {
	e := newEnv(t)
	f, err := os.OpenFile(filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("  access:\n    dm: {policy: allowlist, allowlist: [\"helper:someone-else\"]}\n" +
		"    groups: {policy: allowlist, allowlist: [\"helper:g2\"]}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "refused", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_EXIT_AFTER=2")
	waitDone(t, g)
	got := readLines(out)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "does not take direct messages from helper:u1")
	assert.Equal(t, "echo: u1: hi bot", got[1], "an allowed group that mentions the bot is answered, its text prefixed with the sender")
}

// In a group, a message that does not address the bot is kept as a
// silent_message, shown to the model as recent group conversation when
// the bot is mentioned; group text is prefixed with the sender's name.
func TestGateway_GroupContext(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "script", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out,
		"AGNX_HELPER_SCRIPT=~the train is late|@what do you think?")
	waitDone(t, g)
	assert.Equal(t, []string{"echo: Bea: what do you think?"}, readLines(out))
	reqs := e.llm.Requests()
	require.Len(t, reqs, 1, "the silent message started no turn")
	assert.Contains(t, reqs[0].Messages[0].Content, "Recent group conversation before you were mentioned:\n\nBea: the train is late\n")
}
