package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// stripSeq drops what an import renumbers, for comparing logs.
func stripSeq(evs []runtime.Event) []runtime.Event {
	out := make([]runtime.Event, len(evs))
	for i, e := range evs {
		e.Seq = 0
		out[i] = e
	}
	return out
}

// roundTrip encodes events as events.jsonl lines and decodes them back,
// as an export and an import do.
func roundTrip(t *testing.T, evs []runtime.Event) []runtime.Event {
	var p fastjson.Parser
	out := make([]runtime.Event, 0, len(evs))
	for _, e := range evs {
		d, err := runtime.DecodeEvent(&p, e.AppendJSON(nil))
		require.NoError(t, err)
		out = append(out, d)
	}
	return out
}

func TestLoop_ImportSession(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "hello there")
	h.turn(sid, `please use read_file {"path":"notes.txt"}`)
	h.turn(sid, "bye")
	orig := h.durable(sid)

	ctx := context.Background()
	info, err := h.loop.ImportSession(ctx, roundTrip(t, orig))
	require.NoError(t, err)
	assert.NotEqual(t, sid, info.ID)
	assert.Equal(t, runtime.SessionActive, info.Status)
	assert.Equal(t, 3, info.Turns)
	assert.Equal(t, uint64(len(orig)), info.LastSeq)

	got := h.durable(info.ID)
	require.Len(t, got, len(orig))
	for i, e := range got {
		assert.Equal(t, uint64(i+1), e.Seq)
	}
	assert.Equal(t, stripSeq(roundTrip(t, orig)), stripSeq(got))

	stored, err := h.loop.Session(ctx, info.ID)
	require.NoError(t, err)
	assert.Equal(t, info.Preview, stored.Preview)
	assert.True(t, stored.Created.Equal(orig[0].Time), "times are kept")

	// The imported session goes on with its history after a restart.
	h.restart()
	evs := h.turn(info.ID, "again")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	reqs := h.fake.Requests()
	assert.Equal(t, "hello there", reqs[len(reqs)-1].Messages[1].Content)
}

func TestLoop_ImportSessionClosesRunningTurn(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	evs := []runtime.Event{
		{Type: runtime.EvSessionStart, Agent: "assistant"},
		{Type: runtime.EvUserMessage, Content: "first"},
		{Type: runtime.EvUserMessage, Content: "queued"},
	}
	info, err := h.loop.ImportSession(context.Background(), evs)
	require.NoError(t, err)
	assert.Equal(t, runtime.SessionActive, info.Status)
	got := h.durable(info.ID)
	assert.Equal(t, []runtime.EventType{runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvUserMessage,
		runtime.EvTurnEnd, runtime.EvTurnEnd}, types(got))
	assert.Equal(t, runtime.TurnInterrupted, got[4].Reason)
	assert.False(t, got[0].Time.IsZero())
}

func TestLoop_ImportSessionRefuses(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	start := runtime.Event{Type: runtime.EvSessionStart, Agent: "assistant"}
	user := runtime.Event{Type: runtime.EvUserMessage, Content: "hi"}
	for name, tc := range map[string]struct {
		evs  []runtime.Event
		want string
	}{
		"empty":        {nil, "holds no events"},
		"no start":     {[]runtime.Event{user}, `starts with "user_message"`},
		"no agent":     {[]runtime.Event{{Type: runtime.EvSessionStart}}, "names no agent"},
		"two starts":   {[]runtime.Event{start, user, start}, "event 3 is a second session_start"},
		"token stored": {[]runtime.Event{start, {Type: runtime.EvToken}}, "never stored"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.loop.ImportSession(context.Background(), tc.evs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	list, err := runtime.ListSessions(h.store)
	require.NoError(t, err)
	assert.Empty(t, list)
}
