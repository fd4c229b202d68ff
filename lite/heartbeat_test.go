package lite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// fakeScheduler keeps schedules in memory, as the scheduler's Put, Cancel
// and List do.
type fakeScheduler struct {
	mu      sync.Mutex
	byID    map[string]sched.Schedule
	puts    []string
	cancels []string
}

func newFakeScheduler() *fakeScheduler { return &fakeScheduler{byID: map[string]sched.Schedule{}} }

func (f *fakeScheduler) Put(_ context.Context, sc sched.Schedule) (sched.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc.Status = sched.Active
	f.byID[sc.ID] = sc
	f.puts = append(f.puts, sc.ID)
	return sc, nil
}

func (f *fakeScheduler) Cancel(_ context.Context, id, agent string) (sched.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc := f.byID[id]
	sc.Status = sched.Cancelled
	f.byID[id] = sc
	f.cancels = append(f.cancels, id)
	return sc, nil
}

func (f *fakeScheduler) List(_ context.Context, agent string, all bool) ([]sched.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []sched.Schedule
	for _, sc := range f.byID {
		if (agent == "" || sc.Agent == agent) && (all || sc.Status == sched.Active) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func (f *fakeScheduler) active() map[string]sched.Schedule {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]sched.Schedule{}
	for id, sc := range f.byID {
		if sc.Status == sched.Active {
			out[id] = sc
		}
	}
	return out
}

// writeHBAgent writes an agent whose model is the fake's.
func writeHBAgent(t testing.TB, cfg *config.Config, name, specExtra string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(cfg.AgentsDir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	yaml := "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: " + name +
		"\nspec:\n  model: {provider: ollama, name: m}\n" + specExtra
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.FileName), []byte(yaml), 0o644))
	for n, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(content), 0o644))
	}
}

// openHB opens an app over a fresh data dir with a fake scheduler wired
// in; the fake model answers with replies.
func openHB(t *testing.T, replies ...llmtest.Reply) (*App, *fakeScheduler, *llmtest.Server) {
	t.Helper()
	fake := llmtest.NewOllama(t, replies...)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	require.NoError(t, os.MkdirAll(cfg.AgentsDir, 0o755))
	writeHBAgent(t, cfg, "quiet", "", nil)
	writeHBAgent(t, cfg, "beat", "  heartbeat: {every: 45m, active_hours: \"08:00-22:00\"}\n",
		map[string]string{agents.HeartbeatFile: "Check the backups."})
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	fs := newFakeScheduler()
	app.hb.sched = fs
	return app, fs, fake
}

// idle waits until the heartbeats' worker has done what was posted
// before.
func (h *heartbeats) idle() {
	done := make(chan struct{})
	h.work.post("idle", func(context.Context) { close(done) })
	<-done
}

func TestHeartbeats_SyncAtStartAndReload(t *testing.T) {
	app, fs, _ := openHB(t)
	h := app.hb
	h.start()
	h.idle()
	got := fs.active()
	require.Len(t, got, 1)
	sc := got["hb_beat"]
	assert.Equal(t, sched.Schedule{ID: "hb_beat", Agent: "beat", Status: sched.Active,
		Destination: sched.Destination{Gateway: "heartbeat", ChatID: "beat"},
		Timing:      sched.Timing{EverySeconds: 45 * 60}, Payload: sched.Payload{Kind: sched.KindHeartbeat},
		Missed: sched.MissedSkip, ActiveHours: "08:00-22:00"}, sc)

	// Nothing changed: a reload writes nothing.
	registry{app}.Reload()
	h.idle()
	assert.Equal(t, []string{"hb_beat"}, fs.puts)

	// quiet gains a HEARTBEAT.md, beat loses its heartbeat.
	quiet := filepath.Join(app.Config.AgentsDir, "quiet")
	require.NoError(t, os.WriteFile(filepath.Join(quiet, agents.HeartbeatFile), []byte("Anything new?"), 0o644))
	writeHBAgent(t, app.Config, "beat", "", nil)
	require.NoError(t, os.Remove(filepath.Join(app.Config.AgentsDir, "beat", agents.HeartbeatFile)))
	registry{app}.Reload()
	h.idle()
	got = fs.active()
	require.Len(t, got, 1)
	assert.Equal(t, int64(30*60), got["hb_quiet"].Timing.EverySeconds, "HEARTBEAT.md alone: every 30m")
	assert.Equal(t, []string{"hb_beat"}, fs.cancels)

	// An agent removed loses its heartbeat too.
	require.NoError(t, os.RemoveAll(quiet))
	registry{app}.Reload()
	h.idle()
	assert.Empty(t, fs.active())
}

func TestHeartbeats_InvalidEditKeepsSchedule(t *testing.T) {
	app, fs, _ := openHB(t)
	app.hb.start()
	app.hb.idle()
	writeHBAgent(t, app.Config, "beat", "  heartbeat: {every: 1m}\n", nil)
	registry{app}.Reload()
	app.hb.idle()
	assert.Contains(t, fs.active(), "hb_beat", "an edit being made does not cancel the heartbeat")
}

func TestHeartbeats_RebuildChangesTiming(t *testing.T) {
	app, fs, _ := openHB(t)
	app.hb.start()
	app.hb.idle()
	_, err := app.Agents.LoadAgent("beat")
	require.NoError(t, err)
	app.hb.idle()
	assert.Len(t, fs.puts, 1, "a build with the same heartbeat puts nothing")
	writeHBAgent(t, app.Config, "beat", "  heartbeat: {every: 2h}\n", nil)
	require.NoError(t, app.Agents.Reload("beat"))
	app.hb.idle()
	assert.Equal(t, int64(7200), fs.active()["hb_beat"].Timing.EverySeconds)
}

// firing is a heartbeat run whose record is written to the kv.
func firing(t *testing.T, app *App, n int) (sched.Firing, *string) {
	la, err := app.Agents.LoadAgent("beat")
	require.NoError(t, err)
	sid := new(string)
	key := "test/run/" + strings.Repeat("x", n)
	return sched.Firing{
		Schedule:   hbSchedule("beat", la.Spec.Heartbeat),
		Run:        sched.Run{Due: time.Now()},
		Record:     func(tx *storage.Tx) error { return tx.PutKV(key, []byte(*sid)) },
		SetSession: func(id string) { *sid = id },
	}, sid
}

// fireAndWait runs a heartbeat and waits for its turn's end.
func fireAndWait(t *testing.T, app *App, n int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, sid := firing(t, app, n)
	require.NoError(t, app.heartbeatFire(ctx, f))
	rec, err := app.Loop.KV(ctx, "test/run/"+strings.Repeat("x", n))
	require.NoError(t, err)
	assert.Equal(t, *sid, string(rec), "recorded with the message")
	sub, err := app.Loop.Follow(ctx, *sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	for e := range sub.C() {
		if e.Type == runtime.EvUserMessage {
			assert.Equal(t, agents.OriginHeartbeat, e.Origin)
		}
		if e.Type == runtime.EvTurnEnd {
			info, err := app.Loop.Session(ctx, *sid)
			require.NoError(t, err)
			if !info.Status.InTurn() && e.Seq == info.LastSeq {
				break
			}
		}
	}
	return *sid
}

func TestHeartbeatFire_MarkerOrText(t *testing.T) {
	app, _, fake := openHB(t,
		llmtest.Reply{Text: "HEARTBEAT_OK"},
		llmtest.Reply{Text: "**heartbeat_ok** - all quiet."},
		llmtest.Reply{Text: "The backup failed at 03:00."})
	h := app.hb
	h.now = func() time.Time { return time.Date(2026, 11, 23, 8, 30, 0, 0, time.UTC) }
	h.loc = time.UTC
	got := make(chan hbNotice, 10)
	h.deliver = func(_ context.Context, n hbNotice) error {
		got <- n
		return nil
	}
	h.lastChat["beat"] = chatRef{"telegram", "42"}

	sid := fireAndWait(t, app, 1)
	info, err := app.Loop.Session(context.Background(), sid)
	require.NoError(t, err)
	assert.Equal(t, "heartbeat", info.Gateway)
	assert.Equal(t, "beat", info.ChatID)
	req := fake.Requests()[0]
	msg := req.LastUser()
	assert.True(t, strings.HasPrefix(msg, "[Heartbeat] Monday 2026-11-23 08:30 UTC\n\nCheck the backups.\n\n---\n"), msg)
	assert.Contains(t, msg, "answer exactly HEARTBEAT_OK and nothing else")

	assert.Equal(t, sid, fireAndWait(t, app, 2), "the same session")
	assert.Equal(t, sid, fireAndWait(t, app, 3))
	// The turns' ends were handled in order: when the third one's
	// delivery is done, the first two's would have been too.
	select {
	case n := <-got:
		assert.Equal(t, hbNotice{Agent: "beat", SessionID: sid, Gateway: "telegram", ChatID: "42",
			Text: "The backup failed at 03:00."}, n)
	case <-time.After(30 * time.Second):
		t.Fatal("the answer was not delivered")
	}
	h.idle()
	assert.Empty(t, got, "the marker answers deliver nothing")
	for _, r := range fake.Requests()[1:] {
		for _, m := range r.Messages {
			assert.NotContains(t, m.Content, "echo", "no chat history in a heartbeat")
		}
	}
}

func TestHeartbeatFire_Rotates(t *testing.T) {
	app, _, _ := openHB(t, llmtest.Reply{Text: "HEARTBEAT_OK"}, llmtest.Reply{Text: "HEARTBEAT_OK"},
		llmtest.Reply{Text: "HEARTBEAT_OK"})
	app.hb.maxTurns = 2
	first := fireAndWait(t, app, 1)
	assert.Equal(t, first, fireAndWait(t, app, 2))
	third := fireAndWait(t, app, 3)
	assert.NotEqual(t, first, third, "rotated after 2 turns")
	_, err := app.Loop.Session(context.Background(), first)
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound, "the old session is deleted")
	kv, err := app.Loop.KV(context.Background(), hbSessionKey("beat"))
	require.NoError(t, err)
	assert.Equal(t, third, string(kv))
}

func TestHeartbeatFire_AgentLostItsHeartbeat(t *testing.T) {
	app, fs, _ := openHB(t)
	app.hb.start()
	app.hb.idle()
	f, _ := firing(t, app, 1)
	writeHBAgent(t, app.Config, "beat", "", nil)
	require.NoError(t, os.Remove(filepath.Join(app.Config.AgentsDir, "beat", agents.HeartbeatFile)))
	require.NoError(t, app.Agents.Reload("beat"))
	err := app.heartbeatFire(context.Background(), f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent beat has no HEARTBEAT.md nor spec.heartbeat any more")
	app.hb.idle()
	assert.Empty(t, fs.active())
}

func TestHeartbeats_DeliverToChat(t *testing.T) {
	app, _, _ := openHB(t)
	h := app.hb
	ctx := context.Background()
	n := hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "42", Text: "look", Direct: true}
	err := h.deliver(ctx, n)
	require.Error(t, err, "a chat that never wrote to the bot gets nothing")
	assert.Contains(t, err.Error(), "telegram chat 42 has no session yet")
	_, err = app.Chats().NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "42"}, "quiet")
	require.NoError(t, err)
	err = h.deliver(ctx, n)
	require.Error(t, err, "another agent's chat gets nothing")
	assert.Contains(t, err.Error(), "telegram chat 42 talks to agent quiet, not beat")
	sid, err := app.Chats().NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "42"}, "beat")
	require.NoError(t, err)
	require.NoError(t, h.deliver(ctx, n), "the gateway is not running: stored, delivered at its start")
	var notices []runtime.Event
	require.NoError(t, app.Loop.Events(ctx, sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvAssistant {
			notices = append(notices, e)
		}
		return nil
	}))
	require.Len(t, notices, 1)
	assert.Equal(t, "look", notices[0].Content)
	assert.Equal(t, agents.OriginHeartbeat, notices[0].Origin)

	// No chat: logged, nothing stored.
	require.NoError(t, h.deliver(ctx, hbNotice{Agent: "beat", Text: "x"}))
}

func TestHeartbeats_Target(t *testing.T) {
	app, _, _ := openHB(t)
	h := app.hb
	h.isGateway = func(name string) bool { return name == "telegram" }
	ctx := context.Background()
	assert.Equal(t, hbNotice{Agent: "beat"}, h.target(ctx, "beat"), "no chat yet")

	_, err := app.Chats().NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "7"}, "beat")
	require.NoError(t, err)
	assert.Equal(t, hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "7"}, h.target(ctx, "beat"),
		"found in the sessions after a restart")

	h.turnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "telegram", ChatID: "9", Reason: runtime.TurnCompleted})
	h.turnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "http", ChatID: "x", Reason: runtime.TurnCompleted})
	h.turnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "telegram", ChatID: "8", Origin: "schedule:x"})
	assert.Equal(t, hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "9"}, h.target(ctx, "beat"),
		"the chat it last answered a person in")

	writeHBAgent(t, app.Config, "beat", "  heartbeat:\n    deliver_to: {gateway: telegram, chat_id: \"1\"}\n", nil)
	require.NoError(t, app.Agents.Reload("beat"))
	assert.Equal(t, hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "1", Direct: true}, h.target(ctx, "beat"))
}

func TestHeartbeatAnswer(t *testing.T) {
	long := strings.Repeat("x", hbAckMax+1)
	tests := []struct {
		in, want string
		deliver  bool
	}{
		{"", "", false},
		{"  \n", "", false},
		{"HEARTBEAT_OK", "", false},
		{"heartbeat_ok", "", false},
		{"**HEARTBEAT_OK**", "", false},
		{"`HEARTBEAT_OK`.", "", false},
		{"HEARTBEAT_OK - nothing new.", "", false},
		{"Nothing new. HEARTBEAT_OK", "", false},
		{"HEARTBEAT_OK\n" + long, long, true},
		{long + "\nHEARTBEAT_OK", long, true},
		{"The disk is full.", "The disk is full.", true},
		{"The disk is full; I did not say HEARTBEAT_OK because of it.", "The disk is full; I did not say HEARTBEAT_OK because of it.", true},
		{"HEARTBEAT_OKAY then", "HEARTBEAT_OKAY then", true},
		{"MY_HEARTBEAT_OK", "MY_HEARTBEAT_OK", true},
	}
	for _, tc := range tests {
		got, ok := heartbeatAnswer(tc.in)
		assert.Equal(t, tc.deliver, ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// FuzzHeartbeatAnswer checks that no answer panics the marker's rule, and
// that what is delivered is never empty and never longer than the answer.
func FuzzHeartbeatAnswer(f *testing.F) {
	for _, s := range []string{"HEARTBEAT_OK", "**heartbeat_ok**", "x HEARTBEAT_OK", "HEARTBEAT_O", "é HEARTBEAT_OK é", "_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := heartbeatAnswer(s)
		if ok && (strings.TrimSpace(got) == "" || len(got) > len(s)) {
			t.Fatalf("heartbeatAnswer(%q) = %q", s, got)
		}
		if !ok && got != "" {
			t.Fatalf("heartbeatAnswer(%q) dropped but returned %q", s, got)
		}
	})
}

func TestHeartbeatCheck(t *testing.T) {
	cfg := config.Default()
	spec := &agents.Agent{Name: "beat", Heartbeat: &agents.Heartbeat{Every: time.Hour, PromptFile: "HEARTBEAT.md"}}
	summary, warnings := heartbeatCheck(cfg, spec)
	assert.Equal(t, "every 1h, to the agent's notify settings or the chat it last talked with, instructions from HEARTBEAT.md", summary)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "the heartbeat has no delivery target")

	cfg.Gateways.Telegram.Enabled = true
	cfg.Routes = []config.Route{{Agent: "beat"}}
	_, warnings = heartbeatCheck(cfg, spec)
	assert.Empty(t, warnings, "a chat is routed to it")

	cfg.Routes = nil
	spec.Notify.Deliveries = []agents.Delivery{{Type: "ntfy", URL: "https://ntfy.sh/x"}}
	_, warnings = heartbeatCheck(cfg, spec)
	assert.Empty(t, warnings, "spec.notify sends it somewhere")
	spec.Notify.When = agents.NotifyNever
	_, warnings = heartbeatCheck(cfg, spec)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "spec.notify.when is never")

	spec.Heartbeat.DeliverTo = &agents.HeartbeatTarget{Gateway: "telegram", ChatID: "1"}
	_, warnings = heartbeatCheck(cfg, spec)
	assert.Empty(t, warnings)
	summary, _ = heartbeatCheck(cfg, &agents.Agent{Name: "x"})
	assert.Empty(t, summary)
}

func TestHeartbeatFire_SkippedWhileTheLastRuns(t *testing.T) {
	app, _, _ := openHB(t, llmtest.Reply{Text: "thinking long", Fault: llmtest.Stall, FaultAfter: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, sid := firing(t, app, 1)
	require.NoError(t, app.heartbeatFire(ctx, f))
	info, err := app.Loop.Session(ctx, *sid)
	require.NoError(t, err)
	require.True(t, info.Status.InTurn(), "the first heartbeat's turn runs")
	f2, _ := firing(t, app, 2)
	err = app.heartbeatFire(ctx, f2)
	require.ErrorIs(t, err, errHeartbeatBusy)
	rec, err := app.Loop.KV(ctx, "test/run/xx")
	require.NoError(t, err)
	assert.Nil(t, rec, "nothing recorded: the scheduler logs the run as failed")
}
