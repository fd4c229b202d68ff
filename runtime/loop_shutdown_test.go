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

// gate is a fake model whose first answer waits until released.
type gate struct {
	arrived chan struct{}
	release chan struct{}
	first   llmtest.Reply
	rest    llmtest.Handler
	n       chan int
}

func newGate(first llmtest.Reply, rest llmtest.Handler) *gate {
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{}), first: first, rest: rest, n: make(chan int, 1)}
	g.n <- 0
	return g
}

func (g *gate) handle(r llmtest.RecordedRequest) llmtest.Reply {
	n := <-g.n
	g.n <- n + 1
	if n > 0 {
		return g.rest(r)
	}
	close(g.arrived)
	<-g.release
	return g.first
}

func TestLoop_PauseOnDisconnect(t *testing.T) {
	for _, policy := range []string{"pause", "continue"} {
		t.Run(policy, func(t *testing.T) {
			g := newGate(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}, llmtest.Echo())
			h := newHarness(t, g.handle)
			h.opts.DisconnectGrace = -1
			h.restart()
			h.agent.Spec.Session.OnDisconnect = agents.OnDisconnect(policy)
			sid := h.session()
			ctx := context.Background()
			sub, err := h.loop.Subscribe(ctx, sid)
			require.NoError(t, err)
			_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "look around"})
			require.NoError(t, err)
			<-g.arrived
			sub.Close()
			paused, err := h.loop.Disconnect(ctx, sid)
			require.NoError(t, err)
			assert.Equal(t, policy == "pause", paused)
			close(g.release)

			require.Eventually(t, func() bool {
				info, err := runtime.ReadSession(h.store, sid)
				return err == nil && info.Status == runtime.SessionActive
			}, 10*time.Second, 2*time.Millisecond)
			log := h.durable(sid)
			ends := find(log, runtime.EvTurnEnd)
			require.Len(t, ends, 1)
			if policy == "continue" {
				assert.Equal(t, runtime.TurnCompleted, ends[0].Reason)
				assert.Len(t, find(log, runtime.EvToolResult), 1, "the turn went on without its client")
				return
			}
			assert.Equal(t, runtime.TurnPaused, ends[0].Reason)
			assert.Empty(t, find(log, runtime.EvToolResult), "no tool ran after the pause")
			// The next message goes on from there.
			evs := h.turn(sid, "carry on")
			assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
			reqs := h.fake.Requests()
			msgs := reqs[len(reqs)-1].Messages
			assert.Equal(t, "tool", msgs[len(msgs)-2].Role, "the unanswered call is closed in the context")
			assert.Equal(t, "carry on", msgs[len(msgs)-1].Content)
		})
	}
}

func TestLoop_DrainWaitsForRunningTurns(t *testing.T) {
	g := newGate(llmtest.Reply{Text: "finished"}, llmtest.Echo())
	h := newHarness(t, g.handle)
	sid := h.session()
	ctx := context.Background()
	_, err := h.loop.Send(ctx, sid, runtime.Input{Content: "slow one"})
	require.NoError(t, err)
	<-g.arrived

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, h.loop.Drain(short), context.DeadlineExceeded, "a turn is still running")
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "too late"})
	assert.ErrorIs(t, err, runtime.ErrClosed, "draining refuses new messages")

	close(g.release)
	require.NoError(t, h.loop.Drain(ctx))
	answers := find(h.durable(sid), runtime.EvAssistant)
	require.Len(t, answers, 1)
	assert.Equal(t, "finished", answers[0].Content)
	ends := find(h.durable(sid), runtime.EvTurnEnd)
	require.Len(t, ends, 1)
	assert.NotZero(t, ends[0].Usage.Total(), "turn_end carries the turn's usage")
}

// A client that comes back within the grace period (resuming its stream)
// keeps a pause agent's turn going.
func TestLoop_DisconnectGrace(t *testing.T) {
	g := newGate(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}, llmtest.Echo())
	h := newHarness(t, g.handle)
	h.opts.DisconnectGrace = time.Minute // the client is back long before, however slow the machine
	h.restart()
	sid := h.session()
	ctx := context.Background()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "look around"})
	require.NoError(t, err)
	<-g.arrived
	sub.Close()
	pausing, err := h.loop.Disconnect(ctx, sid)
	require.NoError(t, err)
	assert.True(t, pausing)
	back, err := h.loop.Subscribe(ctx, sid) // the client reconnects
	require.NoError(t, err)
	close(g.release)
	evs := collect(ctx, t, back)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason, "the turn went on")
	assert.Len(t, find(evs, runtime.EvToolResult), 1)
}
