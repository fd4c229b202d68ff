package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

var missingModel = llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`}

func TestLoop_DiscardUnanswered(t *testing.T) {
	ctx := context.Background()
	t.Run("a failed first turn", func(t *testing.T) {
		h := newHarness(t, llmtest.Script(missingModel))
		sid := h.session()
		sub, err := h.loop.Follow(ctx, sid, 0)
		require.NoError(t, err)
		defer sub.Close()
		evs := h.turn(sid, "hi")
		require.Equal(t, runtime.TurnFailed, evs[len(evs)-1].Reason)
		// The user's message was durable before the model was called.
		require.Len(t, find(h.durable(sid), runtime.EvUserMessage), 1)

		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.True(t, gone)
		_, err = runtime.ReadSession(h.store, sid)
		assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
		for range sub.C() { // the follower sees the whole turn, then the end
		}
		assert.True(t, sub.Deleted())
		_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "again"})
		assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
		_, err = h.loop.DiscardUnanswered(ctx, sid)
		assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
	})
	t.Run("a session nobody wrote to", func(t *testing.T) {
		h := newHarness(t, llmtest.Echo())
		sid := h.session()
		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.True(t, gone)
	})
	t.Run("kept once a model answered", func(t *testing.T) {
		h := newHarness(t, llmtest.Script(llmtest.Reply{Text: "hello"}, missingModel))
		sid := h.session()
		h.turn(sid, "hi")
		evs := h.turn(sid, "again")
		require.Equal(t, runtime.TurnFailed, evs[len(evs)-1].Reason)
		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.False(t, gone)
		assert.Len(t, find(h.durable(sid), runtime.EvUserMessage), 2)
	})
	t.Run("kept after a tool call", func(t *testing.T) {
		h := newHarness(t, llmtest.Script(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{"path":"."}`}}}, missingModel))
		sid := h.session()
		evs := h.turn(sid, "list")
		require.Equal(t, runtime.TurnFailed, evs[len(evs)-1].Reason)
		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.False(t, gone)
	})
	t.Run("kept after two unanswered turns", func(t *testing.T) {
		h := newHarness(t, llmtest.Script(missingModel, missingModel))
		sid := h.session()
		h.turn(sid, "hi")
		h.turn(sid, "hi again")
		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.False(t, gone, "a person's second message is theirs to keep")
	})
	t.Run("kept while its turn runs", func(t *testing.T) {
		stalled := make(chan struct{})
		h := newHarness(t, func(llmtest.RecordedRequest) llmtest.Reply {
			close(stalled)
			return llmtest.Reply{Text: "slow", Fault: llmtest.Stall}
		})
		sid := h.session()
		_, err := h.loop.Send(ctx, sid, runtime.Input{Content: "hi"})
		require.NoError(t, err)
		<-stalled
		gone, err := h.loop.DiscardUnanswered(ctx, sid)
		require.NoError(t, err)
		assert.False(t, gone)
		_, err = h.loop.Cancel(ctx, sid)
		require.NoError(t, err)
	})
}

// TestLoop_DiscardUnansweredAfterCrash covers the window between the
// user's message being durable and the front discarding the session: a
// crash there keeps the message (crash safety wins), the restart marks an
// interrupted turn, which is not a failure, so the session stays; an agent
// that continues after a restart runs the turn again, and when that one
// fails unanswered the front discards the session as usual.
func TestLoop_DiscardUnansweredAfterCrash(t *testing.T) {
	for _, policy := range []agents.OnDisconnect{agents.OnDisconnectPause, agents.OnDisconnectContinue} {
		t.Run(string(policy), func(t *testing.T) {
			stalled := make(chan struct{}, 1)
			n := 0
			h := newHarness(t, func(llmtest.RecordedRequest) llmtest.Reply {
				n++ // the fake serves one request at a time here
				if n == 1 {
					stalled <- struct{}{}
					return llmtest.Reply{Text: "never finished", Fault: llmtest.Stall}
				}
				return missingModel
			})
			h.agent.Spec.Session.OnDisconnect = policy
			sid := h.session()
			_, err := h.loop.Send(context.Background(), sid, runtime.Input{Content: "first"})
			require.NoError(t, err)
			<-stalled
			h.restart() // the stop leaves the turn active, as a crash would

			var ends []runtime.Event
			require.Eventually(t, func() bool {
				info, err := runtime.ReadSession(h.store, sid)
				ends = find(h.durable(sid), runtime.EvTurnEnd)
				return err == nil && !info.Status.InTurn() && len(ends) == 1
			}, 10*time.Second, 5*time.Millisecond)
			log := h.durable(sid)
			require.Len(t, find(log, runtime.EvUserMessage), 1, "the message survived the crash")
			assert.Equal(t, "first", find(log, runtime.EvUserMessage)[0].Content)
			if policy == agents.OnDisconnectPause {
				assert.Equal(t, runtime.TurnInterrupted, ends[0].Reason)
				return // kept: the front that would discard it is gone, the user may go on
			}
			assert.Equal(t, runtime.TurnFailed, ends[0].Reason)
			gone, err := h.loop.DiscardUnanswered(context.Background(), sid)
			require.NoError(t, err)
			assert.True(t, gone)
		})
	}
}
