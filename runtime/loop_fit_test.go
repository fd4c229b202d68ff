package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// Over its budget, Fit drops the least recently used idle sessions until
// the rest fit; a dropped one comes back from the log on its next message
// with its whole history.
func TestFit_DropsLeastRecentlyUsedIdleSessions(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	var ids []string
	for i := range 4 {
		sid := h.session()
		for j := range 3 {
			h.turn(sid, fmt.Sprintf("session %d message %d", i, j))
		}
		ids = append(ids, sid)
	}
	n, resident, err := h.loop.Fit(ctx, 1<<40)
	require.NoError(t, err)
	assert.Zero(t, n, "under the budget nothing is dropped")
	perSession := resident / 4

	n, after, err := h.loop.Fit(ctx, resident-perSession)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "one session is enough")
	assert.LessOrEqual(t, after, resident-perSession)
	st, err := h.loop.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, st.Resident)

	evs := h.turn(ids[0], "are you back?") // the least recently used one
	assert.Equal(t, "echo: are you back?", evs[len(evs)-2].Content)
	hist := h.durable(ids[0])
	assert.Len(t, hist, 1+3*3+3, "session_start, three turns and this one: nothing lost")

	n, _, err = h.loop.Fit(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "a budget of nothing drops every idle session")
	h.turn(ids[3], "still here")
}

// A session with a turn running is never dropped.
func TestFit_KeepsBusySessions(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, func(llmtest.RecordedRequest) llmtest.Reply {
		<-gate
		return llmtest.Reply{Text: "done"}
	})
	ctx := context.Background()
	sid := h.session()
	_, err := h.loop.Send(ctx, sid, runtime.Input{Content: "wait"})
	require.NoError(t, err)
	n, _, err := h.loop.Fit(ctx, 0)
	require.NoError(t, err)
	assert.Zero(t, n)
	close(gate)
}
