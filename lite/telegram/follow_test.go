package telegram_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
)

var _ lite.Follower = (*lite.TelegramGateway)(nil)

// notice appends a notice to the session, as a schedule does.
func (r *rig) notice(sid, text string) uint64 {
	r.t.Helper()
	seq, err := r.app.Loop.Notice(context.Background(), sid, runtime.Notice{Content: text, Origin: "schedule:s1"})
	require.NoError(r.t, err)
	return seq
}

// restart stops the gateway and the app and starts both again on the same
// data dir (what a restart, or a crash after the commits, leaves).
func (r *rig) restart() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(r.t, r.gw.Stop(ctx))
	require.NoError(r.t, r.app.Close())
	var err error
	r.app, err = lite.Open(r.cfg, &lite.Options{NoSync: true})
	require.NoError(r.t, err)
	r.gw, err = lite.NewTelegram(r.app, telegram.Options{PollTimeout: time.Second, PollGrace: 300 * time.Millisecond, Sleep: r.sleep,
		Logger: slog.New(slog.NewTextHandler(r.log, nil))})
	require.NoError(r.t, err)
	require.NoError(r.t, r.gw.Start(context.Background()))
}

// chatted has the owner talk once, so the chat has a session (with its
// outbox record), and returns it.
func (r *rig) chatted() string {
	r.t.Helper()
	r.say("hi")
	r.waitText(owner, "echo: hi")
	r.waitIdle("42")
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(r.t, err)
	return sid
}

// settle has the owner talk again and waits for the echo: whatever the
// gateway was to send before it has been sent by then.
func (r *rig) settle(text string) {
	r.t.Helper()
	r.say(text)
	r.waitText(owner, "echo: "+text)
	r.waitIdle("42")
}

// A notice committed to the chat's session, then followed, reaches the
// chat once, as a message of its own.
func TestFollow_NoticeThenFollow(t *testing.T) {
	r := newRig(t, nil)
	sid := r.chatted()
	r.notice(sid, "**reminder**: tea")
	require.NoError(t, r.gw.Follow(context.Background(), sid, "42"))
	m := r.waitText(owner, "reminder: tea")
	assert.Equal(t, "<b>reminder</b>: tea", m.Text)
	require.NoError(t, r.gw.Follow(context.Background(), sid, "42"), "a second Follow delivers nothing again")
	r.settle("again")
	assert.Equal(t, []string{"echo: hi", "reminder: tea", "echo: again"}, r.tg.Texts(owner))
}

// A session of the chat that Telegram never wrote to has no outbox record:
// Follow after the commit starts it before the notice, so it is delivered;
// Follow before the commit and again after delivers it once too.
func TestFollow_SessionWithoutRecord(t *testing.T) {
	r := newRig(t, nil)
	r.chatted()
	ctx := context.Background()
	in := agents.Inbound{Gateway: telegram.GatewayName, ChatType: "private", ChatID: "42", SenderID: "42"}
	sid, err := r.app.Chats().NewSession(ctx, in, "assistant")
	require.NoError(t, err)
	r.notice(sid, "after the commit")
	require.NoError(t, r.gw.Follow(ctx, sid, "42"))
	r.waitText(owner, "after the commit")

	sid2, err := r.app.Chats().NewSession(ctx, in, "assistant")
	require.NoError(t, err)
	require.NoError(t, r.gw.Follow(ctx, sid2, "42"))
	r.notice(sid2, "between two follows")
	require.NoError(t, r.gw.Follow(ctx, sid2, "42"))
	r.waitText(owner, "between two follows")
	r.settle("again")
	assert.Equal(t, []string{"echo: hi", "after the commit", "between two follows", "echo: again"}, r.tg.Texts(owner))
}

// A chat the bot never served is refused, and so is a session that is
// not the chat's own; nothing is sent.
func TestFollow_UnservedChat(t *testing.T) {
	r := newRig(t, nil)
	sid := r.chatted()
	require.ErrorIs(t, r.gw.Follow(context.Background(), sid, "77"), lite.ErrNotServed)
	require.ErrorIs(t, r.gw.Follow(context.Background(), sid, "nope"), lite.ErrNotServed)
	http, err := r.app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant", Gateway: "http"})
	require.NoError(t, err)
	r.notice(http.ID, "not for the chat")
	require.ErrorContains(t, r.gw.Follow(context.Background(), http.ID, "42"), "a chat is delivered only its own sessions")
	r.settle("again")
	assert.Equal(t, []string{"echo: hi", "echo: again"}, r.tg.Texts(owner))
}

// A notice committed when the daemon stops before it is followed (a
// crash between the commit and Follow) is delivered by the next start,
// once: for the chat's session (it has a record) and for one without.
func TestFollow_RestartDeliversOnce(t *testing.T) {
	r := newRig(t, nil)
	sid := r.chatted()
	ctx := context.Background()
	in := agents.Inbound{Gateway: telegram.GatewayName, ChatType: "private", ChatID: "42", SenderID: "42"}
	other, err := r.app.Chats().NewSession(ctx, in, "assistant")
	require.NoError(t, err)
	// The chat's current session is now other; sid keeps its record.
	r.notice(sid, "to the old session")
	r.notice(other, "to the new session")
	r.restart()
	r.waitText(owner, "to the old session")
	r.waitText(owner, "to the new session")
	r.restart()
	r.settle("again")
	texts := r.tg.Texts(owner)
	assert.Len(t, texts, 4, "%q", texts)
	assert.ElementsMatch(t, []string{"echo: hi", "to the old session", "to the new session", "echo: again"}, texts)
}

// Follow on a stopped gateway says so and sends nothing.
func TestFollow_StoppedGateway(t *testing.T) {
	r := newRig(t, nil)
	sid := r.chatted()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, r.gw.Stop(ctx))
	r.notice(sid, "later")
	require.Error(t, r.gw.Follow(ctx, sid, "42"))
	assert.Equal(t, []string{"echo: hi"}, r.tg.Texts(owner))
}
