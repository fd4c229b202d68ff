package autonomy

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

// writeHBAgent writes an agent (its model is the script's).
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

// openHB makes heartbeats over a running loop with a fake scheduler;
// the model answers with replies.
func openHB(t *testing.T, replies ...reply) (*Heartbeats, *fakeScheduler, *env) {
	t.Helper()
	e := newEnv(t, t.TempDir(), replies...)
	writeHBAgent(t, e.cfg, "quiet", "", nil)
	writeHBAgent(t, e.cfg, "beat", "  heartbeat: {every: 45m, active_hours: \"08:00-22:00\"}\n",
		map[string]string{agents.HeartbeatFile: "Check the backups."})
	h := e.heartbeats(t)
	fs := newFakeScheduler()
	h.sched = fs
	return h, fs, e
}

// idle waits until the heartbeats' worker has done what was posted
// before.
func (h *Heartbeats) idle() {
	done := make(chan struct{})
	h.work.post("idle", func(context.Context) { close(done) })
	<-done
}

func TestHeartbeats_SyncAtStartAndReload(t *testing.T) {
	h, fs, e := openHB(t)
	require.NoError(t, h.Start(context.Background()))
	h.idle()
	got := fs.active()
	require.Len(t, got, 1)
	sc := got["hb_beat"]
	assert.Equal(t, sched.Schedule{ID: "hb_beat", Agent: "beat", Status: sched.Active,
		Destination: sched.Destination{Gateway: "heartbeat", ChatID: "beat"},
		Timing:      sched.Timing{EverySeconds: 45 * 60}, Payload: sched.Payload{Kind: sched.KindHeartbeat},
		Missed: sched.MissedSkip, ActiveHours: "08:00-22:00"}, sc)

	// Nothing changed: a reload writes nothing.
	h.Reloaded()
	h.idle()
	assert.Equal(t, []string{"hb_beat"}, fs.puts)

	// quiet gains a HEARTBEAT.md, beat loses its heartbeat.
	quiet := filepath.Join(e.cfg.AgentsDir, "quiet")
	require.NoError(t, os.WriteFile(filepath.Join(quiet, agents.HeartbeatFile), []byte("Anything new?"), 0o644))
	writeHBAgent(t, e.cfg, "beat", "", nil)
	require.NoError(t, os.Remove(filepath.Join(e.cfg.AgentsDir, "beat", agents.HeartbeatFile)))
	h.Reloaded()
	h.idle()
	got = fs.active()
	require.Len(t, got, 1)
	assert.Equal(t, int64(30*60), got["hb_quiet"].Timing.EverySeconds, "HEARTBEAT.md alone: every 30m")
	assert.Equal(t, []string{"hb_beat"}, fs.cancels)

	// An agent removed loses its heartbeat too.
	require.NoError(t, os.RemoveAll(quiet))
	h.Reloaded()
	h.idle()
	assert.Empty(t, fs.active())
}

func TestHeartbeats_InvalidEditKeepsSchedule(t *testing.T) {
	h, fs, e := openHB(t)
	require.NoError(t, h.Start(context.Background()))
	h.idle()
	writeHBAgent(t, e.cfg, "beat", "  heartbeat: {every: 1m}\n", nil)
	h.Reloaded()
	h.idle()
	assert.Contains(t, fs.active(), "hb_beat", "an edit being made does not cancel the heartbeat")
}

func TestHeartbeats_RebuildChangesTiming(t *testing.T) {
	h, fs, e := openHB(t)
	require.NoError(t, h.Start(context.Background()))
	h.idle()
	e.rebuilt(t, h, "beat")
	h.idle()
	assert.Len(t, fs.puts, 1, "a build with the same heartbeat puts nothing")
	writeHBAgent(t, e.cfg, "beat", "  heartbeat: {every: 2h}\n", nil)
	e.rebuilt(t, h, "beat")
	h.idle()
	assert.Equal(t, int64(7200), fs.active()["hb_beat"].Timing.EverySeconds)
}

// firing is a heartbeat run whose record is written to the kv.
func firing(t *testing.T, e *env, n int) (sched.Firing, *string) {
	spec, err := e.agents.Spec("beat")
	require.NoError(t, err)
	sid := new(string)
	key := "test/run/" + strings.Repeat("x", n)
	return sched.Firing{
		Schedule:   hbSchedule("beat", spec.Heartbeat),
		Run:        sched.Run{Due: time.Now()},
		Record:     func(tx *storage.Tx) error { return tx.PutKV(key, []byte(*sid)) },
		SetSession: func(id string) { *sid = id },
	}, sid
}

// fireAndWait runs a heartbeat and waits for its turn's end.
func fireAndWait(t *testing.T, e *env, h *Heartbeats, n int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, sid := firing(t, e, n)
	require.NoError(t, h.fire(ctx, f))
	rec, err := e.loop.KV(ctx, "test/run/"+strings.Repeat("x", n))
	require.NoError(t, err)
	assert.Equal(t, *sid, string(rec), "recorded with the message")
	sub, err := e.loop.Follow(ctx, *sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	for ev := range sub.C() {
		if ev.Type == runtime.EvUserMessage {
			assert.Equal(t, agents.OriginHeartbeat, ev.Origin)
		}
		if ev.Type == runtime.EvTurnEnd {
			info, err := e.loop.Session(ctx, *sid)
			require.NoError(t, err)
			if !info.Status.InTurn() && ev.Seq == info.LastSeq {
				break
			}
		}
	}
	return *sid
}

func TestHeartbeatFire_MarkerOrText(t *testing.T) {
	h, _, e := openHB(t,
		reply{text: "HEARTBEAT_OK"},
		reply{text: "**heartbeat_ok** - all quiet."},
		reply{text: "The backup failed at 03:00."})
	h.now = func() time.Time { return time.Date(2026, 11, 23, 8, 30, 0, 0, time.UTC) }
	h.loc = time.UTC
	got := make(chan hbNotice, 10)
	h.deliver = func(_ context.Context, n hbNotice) error {
		got <- n
		return nil
	}
	h.lastChat["beat"] = chatRef{"telegram", "42"}

	sid := fireAndWait(t, e, h, 1)
	info, err := e.loop.Session(context.Background(), sid)
	require.NoError(t, err)
	assert.Equal(t, "heartbeat", info.Gateway)
	assert.Equal(t, "beat", info.ChatID)
	msg := e.model.lastUser(0)
	assert.True(t, strings.HasPrefix(msg, "[Heartbeat] Monday 2026-11-23 08:30 UTC\n\nCheck the backups.\n\n---\n"), msg)
	assert.Contains(t, msg, "answer exactly HEARTBEAT_OK and nothing else")

	assert.Equal(t, sid, fireAndWait(t, e, h, 2), "the same session")
	assert.Equal(t, sid, fireAndWait(t, e, h, 3))
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
	for _, r := range e.model.all()[1:] {
		for _, m := range r.Messages {
			assert.NotContains(t, m.Content, "echo", "no chat history in a heartbeat")
		}
	}
}

func TestHeartbeatFire_Rotates(t *testing.T) {
	h, _, e := openHB(t, reply{text: "HEARTBEAT_OK"}, reply{text: "HEARTBEAT_OK"},
		reply{text: "HEARTBEAT_OK"})
	h.maxTurns = 2
	first := fireAndWait(t, e, h, 1)
	assert.Equal(t, first, fireAndWait(t, e, h, 2))
	third := fireAndWait(t, e, h, 3)
	assert.NotEqual(t, first, third, "rotated after 2 turns")
	_, err := e.loop.Session(context.Background(), first)
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound, "the old session is deleted")
	kv, err := e.loop.KV(context.Background(), hbSessionKey("beat"))
	require.NoError(t, err)
	assert.Equal(t, third, string(kv))
}

func TestHeartbeatFire_AgentLostItsHeartbeat(t *testing.T) {
	h, fs, e := openHB(t)
	require.NoError(t, h.Start(context.Background()))
	h.idle()
	f, _ := firing(t, e, 1)
	writeHBAgent(t, e.cfg, "beat", "", nil)
	require.NoError(t, os.Remove(filepath.Join(e.cfg.AgentsDir, "beat", agents.HeartbeatFile)))
	e.rebuilt(t, h, "beat")
	err := h.fire(context.Background(), f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent beat has no HEARTBEAT.md nor spec.heartbeat any more")
	h.idle()
	assert.Empty(t, fs.active())
}

func TestHeartbeats_DeliverToChat(t *testing.T) {
	h, _, e := openHB(t)
	ctx := context.Background()
	n := hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "42", Text: "look", Direct: true}
	err := h.deliver(ctx, n)
	require.Error(t, err, "a chat that never wrote to the bot gets nothing")
	assert.Contains(t, err.Error(), "telegram chat 42 has no session yet")
	_, err = e.chats.NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "42"}, "quiet")
	require.NoError(t, err)
	err = h.deliver(ctx, n)
	require.Error(t, err, "another agent's chat gets nothing")
	assert.Contains(t, err.Error(), "telegram chat 42 talks to agent quiet, not beat")
	sid, err := e.chats.NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "42"}, "beat")
	require.NoError(t, err)
	require.NoError(t, h.deliver(ctx, n), "the gateway is not running: stored, delivered at its start")
	var notices []runtime.Event
	require.NoError(t, e.loop.Events(ctx, sid, 0, func(e runtime.Event) error {
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
	h, _, e := openHB(t)
	h.isGateway = func(name string) bool { return name == "telegram" }
	ctx := context.Background()
	assert.Equal(t, hbNotice{Agent: "beat"}, h.target(ctx, "beat"), "no chat yet")

	_, err := e.chats.NewSession(ctx, agents.Inbound{Gateway: "telegram", ChatID: "7"}, "beat")
	require.NoError(t, err)
	assert.Equal(t, hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "7"}, h.target(ctx, "beat"),
		"found in the sessions after a restart")

	h.TurnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "telegram", ChatID: "9", Reason: runtime.TurnCompleted})
	h.TurnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "http", ChatID: "x", Reason: runtime.TurnCompleted})
	h.TurnEnded(runtime.TurnEnd{Agent: "beat", Gateway: "telegram", ChatID: "8", Origin: "schedule:x"})
	assert.Equal(t, hbNotice{Agent: "beat", Gateway: "telegram", ChatID: "9"}, h.target(ctx, "beat"),
		"the chat it last answered a person in")

	writeHBAgent(t, e.cfg, "beat", "  heartbeat:\n    deliver_to: {gateway: telegram, chat_id: \"1\"}\n", nil)
	e.rebuilt(t, h, "beat")
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
	summary, warnings := HeartbeatCheck(cfg, spec)
	assert.Equal(t, "every 1h, to the agent's notify settings or the chat it last talked with, instructions from HEARTBEAT.md", summary)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "the heartbeat has no delivery target")

	cfg.Gateways.Telegram.Enabled = true
	cfg.Routes = []config.Route{{Agent: "beat"}}
	_, warnings = HeartbeatCheck(cfg, spec)
	assert.Empty(t, warnings, "a chat is routed to it")

	cfg.Routes = nil
	spec.Notify.Deliveries = []agents.Delivery{{Type: "ntfy", URL: "https://ntfy.sh/x"}}
	_, warnings = HeartbeatCheck(cfg, spec)
	assert.Empty(t, warnings, "spec.notify sends it somewhere")
	spec.Notify.When = agents.NotifyNever
	_, warnings = HeartbeatCheck(cfg, spec)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "spec.notify.when is never")

	spec.Heartbeat.DeliverTo = &agents.HeartbeatTarget{Gateway: "telegram", ChatID: "1"}
	_, warnings = HeartbeatCheck(cfg, spec)
	assert.Empty(t, warnings)
	summary, _ = HeartbeatCheck(cfg, &agents.Agent{Name: "x"})
	assert.Empty(t, summary)
}

func TestHeartbeatFire_SkippedWhileTheLastRuns(t *testing.T) {
	h, _, e := openHB(t, reply{text: "thinking long", stall: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, sid := firing(t, e, 1)
	require.NoError(t, h.fire(ctx, f))
	info, err := e.loop.Session(ctx, *sid)
	require.NoError(t, err)
	require.True(t, info.Status.InTurn(), "the first heartbeat's turn runs")
	f2, _ := firing(t, e, 2)
	err = h.fire(ctx, f2)
	require.ErrorIs(t, err, errHeartbeatBusy)
	rec, err := e.loop.KV(ctx, "test/run/xx")
	require.NoError(t, err)
	assert.Nil(t, rec, "nothing recorded: the scheduler logs the run as failed")
}

// A heartbeat's turn counts against its agent's daily token budget, and
// the heartbeat after it is skipped with the budget's sentence: nothing is
// recorded as fired, and nothing enters the heartbeat session.
func TestHeartbeatFire_PastTheBudgetIsSkipped(t *testing.T) {
	h, _, e := openHB(t, reply{text: "HEARTBEAT_OK", tokens: 5}, reply{text: "HEARTBEAT_OK", tokens: 5})
	yaml := filepath.Join(e.cfg.AgentsDir, "beat", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(yaml, append(data, "  session: {daily_token_budget: 1}\n"...), 0o644))
	e.rebuilt(t, h, "beat")

	sid := fireAndWait(t, e, h, 1) // uses the budget
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := e.loop.Session(ctx, sid)
	require.NoError(t, err)
	f, _ := firing(t, e, 2)
	err = h.fire(ctx, f)
	var skip *sched.SkipError
	require.ErrorAs(t, err, &skip)
	assert.Equal(t, runtime.CodeTokenBudget, skip.Code)
	assert.True(t, strings.HasPrefix(skip.Reason, "beat has used its daily token budget ("), skip.Reason)
	rec, err := e.loop.KV(ctx, "test/run/xx")
	require.NoError(t, err)
	assert.Nil(t, rec, "nothing recorded as fired: the scheduler records the skip")
	after, err := e.loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.Equal(t, before.LastSeq, after.LastSeq, "nothing entered the heartbeat session")
}

// A task's turn refused anyway (the budget used while it was queued)
// reports why, not only that it failed.
func TestSchedules_FailedTaskSaysWhy(t *testing.T) {
	h := &Schedules{reports: make(chan schedReport, 1), working: true} // no worker: the report stays queued
	h.TurnEnded(runtime.TurnEnd{Origin: sched.Origin("sched_1"), Reason: runtime.TurnFailed,
		Error: "assistant has used its daily token budget (42 of 30 tokens)"})
	r := <-h.reports
	assert.Equal(t, schedReport{id: "sched_1", errMsg: "the task's turn ended failed: assistant has used its daily token budget (42 of 30 tokens)"}, r)
}
