package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// Passive and silent messages are stored without a turn; the next turn's
// request has the passive ones in the conversation and the silent ones
// as recent group context in the system message, also after a restart.
func TestLoop_KeptMessages(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	ctx := context.Background()
	sent, err := h.loop.Send(ctx, sid, runtime.Input{Content: "Ann: the train is late", SenderID: "1", SenderName: "Ann", Keep: runtime.KeepSilent})
	require.NoError(t, err)
	assert.False(t, sent.Queued)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "Bob: I will be there at 9", SenderID: "2", SenderName: "Bob", Keep: runtime.KeepPassive})
	require.NoError(t, err)
	info, err := h.loop.Session(ctx, sid)
	require.NoError(t, err)
	assert.False(t, info.Status.InTurn(), "kept messages start no turn")
	assert.Empty(t, h.fake.Requests())

	log := h.durable(sid)
	require.Len(t, log, 3)
	assert.Equal(t, runtime.EvSilentMessage, log[1].Type)
	assert.Equal(t, "Ann", log[1].SenderName)
	assert.True(t, log[2].Passive)

	h.restart()
	evs := h.turn(sid, "Cy: @bot when do we meet?")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	req := h.fake.Requests()[0]
	assert.True(t, strings.HasSuffix(req.Messages[0].Content, "\n\nYou are assistant, a test agent.\n\nRecent group conversation before you were mentioned:\n\nAnn: the train is late\n"), req.Messages[0].Content)
	var users []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	assert.Equal(t, []string{"Bob: I will be there at 9", "Cy: @bot when do we meet?"}, users)
}

// A passive message that arrives during a turn joins the history at its
// end and starts no turn of its own.
func TestLoop_PassiveDuringTurn(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.Last().Content, "slow") {
			<-gate
		}
		return llmtest.Echo()(r)
	})
	sid := h.session()
	ctx := context.Background()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "slow"})
	require.NoError(t, err)
	sent, err := h.loop.Send(ctx, sid, runtime.Input{Content: "aside", Keep: runtime.KeepPassive})
	require.NoError(t, err)
	assert.False(t, sent.Queued, "a passive message is not queued for a turn")
	close(gate)
	collect(ctx, t, sub)
	evs := h.turn(sid, "next")
	assert.Equal(t, "echo: next", find(evs, runtime.EvAssistant)[0].Content)
	reqs := h.fake.Requests()
	require.Len(t, reqs, 2, "the passive message started no turn")
	var contents []string
	for _, m := range reqs[1].Messages[1:] {
		contents = append(contents, m.Content)
	}
	assert.Equal(t, []string{"slow", "echo: slow", "aside", "next"}, contents)
}
