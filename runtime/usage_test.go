package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// fakeClock is a settable Options.Now.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// usageRecorder is an Observer that keeps what UsageRecorded told it.
type usageRecorder struct {
	got chan runtime.UsageRecord
}

func (u *usageRecorder) TurnEnded(string, string, time.Duration, runtime.Usage) {}
func (u *usageRecorder) ToolCalled(string, string, string, bool, time.Duration) {}
func (u *usageRecorder) ModelCalled(string, string, time.Duration, error)       {}
func (u *usageRecorder) UsageRecorded(r runtime.UsageRecord)                    { u.got <- r }
func replyWith(u llmtest.Usage) llmtest.Handler {
	return func(llmtest.RecordedRequest) llmtest.Reply { return llmtest.Reply{Text: "ok", Usage: u} }
}

// Every call's usage, reasoning from an OpenAI stream included, is in the
// ledger exactly once, across a restart, and equals the sum of the
// assistant_response events' usage.
func TestUsage_TotalsAcrossRestart(t *testing.T) {
	h := newHarnessKind(t, llmtest.OpenAI, replyWith(llmtest.Usage{Prompt: 100, Completion: 20, Reasoning: 5}))
	rec := &usageRecorder{got: make(chan runtime.UsageRecord, 16)}
	h.opts.Observer = rec
	h.agent.Spec.Model.Provider = "openai"
	h.restart()
	sid := h.session()
	for range 3 {
		assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "hi")).Reason)
	}
	h.restart()
	for range 2 {
		assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "again")).Reason)
	}
	var sum runtime.Usage
	for _, e := range find(h.durable(sid), runtime.EvAssistant) {
		sum = sum.Add(e.Usage)
	}
	assert.Equal(t, runtime.Usage{PromptTokens: 500, CompletionTokens: 100, ReasoningTokens: 25}, sum)
	h.restart()

	rep, err := runtime.ReadUsage(h.store, runtime.UsageQuery{By: runtime.UsageByModel})
	require.NoError(t, err)
	want := runtime.UsageRow{Key: "qwen3:1.7b", Calls: 5, Input: 500, Output: 100, Reasoning: 25, Total: 600}
	assert.Equal(t, []runtime.UsageRow{want}, rep.Rows)
	want.Key = "total"
	assert.Equal(t, want, rep.Total)
	assert.False(t, rep.Priced)

	for range 5 {
		r := <-rec.got
		assert.Equal(t, "assistant", r.Agent)
		assert.Equal(t, sid, r.Session)
		assert.Equal(t, "openai", r.Provider)
		assert.Equal(t, 5, r.Usage.ReasoningTokens)
	}
}

func last(evs []runtime.Event) runtime.Event { return evs[len(evs)-1] }

// An agent past its daily budget gets its turn refused with one sentence,
// and is allowed again the next day.
func TestUsage_DailyBudget(t *testing.T) {
	h := newHarness(t, replyWith(llmtest.Usage{Prompt: 100, Completion: 20}))
	clock := newFakeClock(time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC))
	h.opts.Now = clock.Now
	h.opts.Usage = runtime.UsageOptions{Location: time.UTC, DailyTokenBudget: 1000}
	h.agent.Spec.Session.DailyTokenBudget = 150 // the agent's own wins
	h.restart()
	sid := h.session()
	assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "one")).Reason) // 0 used
	assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "two")).Reason) // 120 used
	h.restart()                                                             // today's totals come back from the rollups
	evs := h.turn(sid, "three")                                             // 240 used
	assert.Equal(t, runtime.TurnFailed, last(evs).Reason)
	errs := find(evs, runtime.EvError)
	require.Len(t, errs, 1)
	assert.Equal(t, runtime.CodeTokenBudget, errs[0].Code)
	assert.Equal(t, "assistant has used its daily token budget (240 of 150 tokens): the budget resets at midnight (UTC); "+
		"raise spec.session.daily_token_budget to allow more", errs[0].Content)
	assert.Len(t, h.fake.Requests(), 2, "the refused turn never called the model")

	clock.Advance(2 * time.Hour) // midnight UTC has passed
	assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "four")).Reason)

	rep, err := runtime.ReadUsage(h.store, runtime.UsageQuery{By: runtime.UsageByDay, Location: time.UTC})
	require.NoError(t, err)
	require.Len(t, rep.Rows, 2)
	assert.Equal(t, "2026-11-23", rep.Rows[0].Key)
	assert.EqualValues(t, 2, rep.Rows[0].Calls)
	assert.Equal(t, "2026-11-24", rep.Rows[1].Key)
	assert.EqualValues(t, 1, rep.Rows[1].Calls)
}

// What starts turns on its own (a schedule, a heartbeat) asks first
// whether the agent used its budget, and gets the refusal's sentence; a
// turn refused anyway (one that was queued) tells its end handler why.
func TestUsage_BudgetRefusal(t *testing.T) {
	h := newHarness(t, replyWith(llmtest.Usage{Prompt: 100, Completion: 20}))
	h.opts.Usage = runtime.UsageOptions{Location: time.UTC}
	h.agent.Spec.Session.DailyTokenBudget = 150
	ends := make(chan runtime.TurnEnd, 4)
	h.opts.TurnEnded = func(te runtime.TurnEnd) { ends <- te }
	h.restart()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	why, err := h.loop.BudgetRefusal(ctx, "assistant")
	require.NoError(t, err)
	assert.Empty(t, why, "nothing used yet")
	sid := h.session()
	h.turn(sid, "one")
	h.turn(sid, "two") // 240 used
	<-ends
	<-ends
	why, err = h.loop.BudgetRefusal(ctx, "assistant")
	require.NoError(t, err)
	const want = "assistant has used its daily token budget (240 of 150 tokens): the budget resets at midnight (UTC); " +
		"raise spec.session.daily_token_budget to allow more"
	assert.Equal(t, want, why)
	_, err = h.loop.BudgetRefusal(ctx, "nobody")
	assert.ErrorContains(t, err, "agent not found: nobody")

	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "[Scheduled Task]", Origin: "schedule:sched_1"})
	require.NoError(t, err)
	select {
	case te := <-ends:
		assert.Equal(t, runtime.TurnFailed, te.Reason)
		assert.Equal(t, "schedule:sched_1", te.Origin)
		assert.Equal(t, want, te.Error, "the end says why it failed")
	case <-ctx.Done():
		t.Fatal("no turn end")
	}
	assert.Len(t, h.fake.Requests(), 2, "neither the question nor the refused turn called the model")
}

// The config's default budget applies to an agent without its own.
func TestUsage_DefaultBudget(t *testing.T) {
	h := newHarness(t, replyWith(llmtest.Usage{Prompt: 100, Completion: 20}))
	h.opts.Usage = runtime.UsageOptions{DailyTokenBudget: 100}
	h.restart()
	sid := h.session()
	assert.Equal(t, runtime.TurnCompleted, last(h.turn(sid, "one")).Reason)
	evs := h.turn(sid, "two")
	assert.Equal(t, runtime.TurnFailed, last(evs).Reason)
	assert.Equal(t, runtime.CodeTokenBudget, find(evs, runtime.EvError)[0].Code)
}
