package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// holdTool blocks each call until release is closed, telling started
// when a call begins.
type holdTool struct {
	started chan struct{}
	release chan struct{}
}

func (g *holdTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "wait", Description: "waits", Schema: []byte(`{"type":"object"}`)}
}

func (g *holdTool) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return runtime.Result{Content: "waited"}, nil
}

func TestNotice_OutsideATurnJoinsTheConversationWithItsWrite(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	ctx := context.Background()

	seq, err := h.loop.Notice(ctx, sid, runtime.Notice{Content: "Reminder: call mum", Origin: "schedule:sched_1",
		Commit: func(tx *storage.Tx) error { return tx.PutKV("sched/test", []byte("ran")) }})
	require.NoError(t, err)
	v, err := h.loop.KV(ctx, "sched/test")
	require.NoError(t, err)
	assert.Equal(t, "ran", string(v), "the write is committed with the notice")

	log := h.durable(sid)
	require.Len(t, log, 2)
	assert.Equal(t, seq, log[1].Seq)
	assert.Equal(t, runtime.EvAssistant, log[1].Type)
	assert.Equal(t, "schedule:sched_1", log[1].Origin)
	info, err := h.loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.False(t, info.Status.InTurn(), "a notice starts no turn")

	h.turn(sid, "done, called her")
	msgs := h.fake.Requests()[0].Messages
	require.GreaterOrEqual(t, len(msgs), 3)
	assert.Equal(t, "assistant", msgs[len(msgs)-2].Role)
	assert.Equal(t, "Reminder: call mum", msgs[len(msgs)-2].Content, "the model sees the reminder before the reply")

	_, err = h.loop.Notice(ctx, sid, runtime.Notice{Content: "x"})
	assert.Error(t, err, "a notice needs an origin")
	_, err = h.loop.Notice(ctx, "session_nope", runtime.Notice{Content: "x", Origin: "schedule:s"})
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
}

func TestNotice_DuringATurnWaitsForItsEnd(t *testing.T) {
	gate := &holdTool{started: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, gate)
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "please use wait"})
	require.NoError(t, err)
	<-gate.started
	_, err = h.loop.Notice(ctx, sid, runtime.Notice{Content: "the backup failed", Origin: "process"})
	require.NoError(t, err)
	close(gate.release)
	collect(ctx, t, sub)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	for _, m := range reqs[1].Messages {
		assert.NotEqual(t, "the backup failed", m.Content, "never between a tool call and its result")
	}
	assert.Equal(t, "tool", reqs[1].Last().Role)

	check := func() {
		h.turn(sid, "and now?")
		last := h.fake.Requests()[len(h.fake.Requests())-1].Messages
		require.GreaterOrEqual(t, len(last), 3)
		assert.Equal(t, "the backup failed", last[len(last)-2].Content, "after the turn, before the next message")
	}
	check()
	h.restart() // the checkpoint and the log fold the same
	h.turn(sid, "again")
	msgs := h.fake.Requests()[len(h.fake.Requests())-1].Messages
	var seen int
	for _, m := range msgs {
		if m.Content == "the backup failed" {
			seen++
		}
	}
	assert.Equal(t, 1, seen)
}

func TestTurnEnded_ToldWhoStartedItAndWhetherAnyoneWatched(t *testing.T) {
	var mu sync.Mutex
	var ends []runtime.TurnEnd
	got := make(chan struct{}, 4)
	h := newHarness(t, llmtest.Echo())
	h.opts.TurnEnded = func(te runtime.TurnEnd) {
		mu.Lock()
		ends = append(ends, te)
		mu.Unlock()
		got <- struct{}{}
	}
	h.restart()
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	h.turn(sid, "watched") // h.turn subscribes
	<-got
	_, err := h.loop.Send(ctx, sid, runtime.Input{Content: "nobody looks", Origin: "schedule:sched_9"})
	require.NoError(t, err)
	select {
	case <-got:
	case <-ctx.Done():
		t.Fatal("no turn end reported")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ends, 2)
	assert.True(t, ends[0].Watched)
	assert.Empty(t, ends[0].Origin)
	assert.Equal(t, "echo: watched", ends[0].Answer)
	assert.False(t, ends[1].Watched)
	assert.Equal(t, "schedule:sched_9", ends[1].Origin)
	assert.Equal(t, runtime.TurnCompleted, ends[1].Reason)
	assert.Equal(t, "echo: nobody looks", ends[1].Answer)
	assert.Equal(t, sid, ends[1].SessionID)
	assert.Equal(t, "assistant", ends[1].Agent)
	assert.Equal(t, "test", ends[1].Gateway)

	log := h.durable(sid)
	var origins []string
	for _, e := range log {
		if e.Type == runtime.EvUserMessage {
			origins = append(origins, e.Origin)
		}
	}
	assert.Equal(t, []string{"", "schedule:sched_9"}, origins, "the origin is stored with the message")
}
