package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func resident(t *testing.T, h *harness) int {
	st, err := h.loop.Stats(context.Background())
	require.NoError(t, err)
	return st.Resident
}

func TestLoop_IdleSessionsLeaveMemory(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.opts.IdleAfter = 30 * time.Millisecond
	h.restart()
	sid := h.session()
	h.turn(sid, "my name is Ada")
	require.Eventually(t, func() bool { return resident(t, h) == 0 }, 30*time.Second, 5*time.Millisecond,
		"an idle session is dropped")

	evs := h.turn(sid, "what is my name?")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	reqs := h.fake.Requests()
	assert.Equal(t, "my name is Ada", reqs[len(reqs)-1].Messages[1].Content, "rebuilt from its checkpoint")
}

func TestLoop_WatchedSessionsStay(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.opts.IdleAfter = 20 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		// The loop runs in the bubble: its sweeps follow the fake clock.
		outer := h.t
		h.t = t
		defer func() { h.close(); h.t = outer }()
		h.restart()
		sid := h.session()
		sub, err := h.loop.Subscribe(context.Background(), sid)
		require.NoError(t, err)
		time.Sleep(10 * time.Second) // a thousand sweeps
		synctest.Wait()
		assert.Equal(t, 1, resident(t, h), "a session with a subscriber stays resident")

		sub.Close()
		time.Sleep(2 * h.opts.IdleAfter)
		synctest.Wait()
		assert.Zero(t, resident(t, h), "once nobody watches, it is dropped")
	})
}

func TestLoop_ShedRefusesAndRecovers(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "hello")
	dropped, err := h.loop.Shed(context.Background(), true)
	require.NoError(t, err)
	assert.Equal(t, 1, dropped, "idle sessions are dropped at once")
	_, err = h.loop.Send(context.Background(), sid, runtime.Input{Content: "now?"})
	assert.ErrorIs(t, err, runtime.ErrBusy)

	_, err = h.loop.Shed(context.Background(), false)
	require.NoError(t, err)
	evs := h.turn(sid, "now?")
	assert.Equal(t, "echo: now?", find(evs, runtime.EvAssistant)[0].Content)
}

// Bounded to almost nothing, only the session a turn just used stays in
// memory; the others come back from the log with their whole history.
func TestLoop_HeldSessionsStayWithinTheirBound(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.opts.HeldBytes = 1
	h.restart()
	var ids []string
	for i := range 3 {
		sid := h.session()
		h.turn(sid, fmt.Sprintf("session %d: my name is Ada %d", i, i))
		h.turn(sid, "and I like tea")
		ids = append(ids, sid)
	}
	assert.Equal(t, 1, resident(t, h), "the last session used, and no other")

	evs := h.turn(ids[0], "what is my name?")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	msgs := h.fake.Requests()[len(h.fake.Requests())-1].Messages
	require.Len(t, msgs, 1+5, "the system prompt and the whole window, back from the log")
	assert.Equal(t, "session 0: my name is Ada 0", msgs[1].Content)
	assert.Equal(t, "what is my name?", msgs[5].Content)
}
