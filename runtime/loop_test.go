package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func TestLoop_SimpleTurn(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	evs := h.turn(sid, "hello there")

	assert.Equal(t, []runtime.EventType{runtime.EvUserMessage, runtime.EvAssistant, runtime.EvTurnEnd}, types(evs))
	assert.Equal(t, "echo: hello there", tokens(evs), "tokens stream the answer")
	answer := find(evs, runtime.EvAssistant)[0]
	assert.Equal(t, "echo: hello there", answer.Content)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.NotZero(t, answer.Usage.Total())

	// The same events are in the log, after session_start, with seqs 1..n.
	log := h.durable(sid)
	require.Len(t, log, 4)
	for i, e := range log {
		assert.Equal(t, uint64(i+1), e.Seq)
	}
	assert.Equal(t, runtime.EvSessionStart, log[0].Type)

	req := h.fake.Requests()[0]
	assert.Equal(t, "qwen3:1.7b", req.Model)
	assert.Equal(t, "system", req.Messages[0].Role)
	assert.Equal(t, agents.PrimeDirectives+"\n\nYou are assistant, a test agent.", req.Messages[0].Content)
	assert.Equal(t, []string{"read_file", "list_dir"}, req.ToolNames())
	assert.Equal(t, "5m", req.KeepAlive)
}

func TestLoop_ToolCall(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	evs := h.turn(sid, `please use read_file {"path":"notes.txt"}`)

	assert.Equal(t, []runtime.EventType{runtime.EvUserMessage, runtime.EvAssistant, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvAssistant, runtime.EvTurnEnd}, types(evs))
	res := find(evs, runtime.EvToolResult)[0]
	assert.True(t, res.Success)
	assert.Equal(t, "buy milk", res.Content)
	assert.Equal(t, "read_file said: buy milk", find(evs, runtime.EvAssistant)[1].Content)

	reqs := h.fake.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Last()
	assert.Equal(t, "tool", last.Role)
	assert.Equal(t, "buy milk", last.Content)
	assert.Equal(t, "read_file", last.ToolName)
}

func TestLoop_OpenAICompatible(t *testing.T) {
	h := newHarnessKind(t, llmtest.OpenAI, llmtest.Script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}, ArgChunks: 4},
		llmtest.Reply{Text: "It says buy milk.", Chunks: 4},
	))
	sid := h.session()
	evs := h.turn(sid, "read my notes")
	assert.Equal(t, []runtime.EventType{runtime.EvUserMessage, runtime.EvAssistant, runtime.EvToolCall,
		runtime.EvToolResult, runtime.EvAssistant, runtime.EvTurnEnd}, types(evs))
	call := find(evs, runtime.EvAssistant)[0].ToolCalls[0]
	assert.Equal(t, runtime.ToolCall{ID: "call_a", Name: "read_file", Arguments: `{"path":"notes.txt"}`}, call,
		"argument fragments are assembled")
	assert.Equal(t, "It says buy milk.", tokens(evs))
	second := h.fake.Requests()[1]
	assert.Equal(t, "Bearer sk-test", second.Header.Get("Authorization"))
	assert.Equal(t, "call_a", second.Last().ToolCallID)
	assert.Equal(t, "buy milk", second.Last().Content)
}

func TestLoop_TextToolCall(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		llmtest.Reply{Text: "Let me look. " + llmtest.TextToolCall("read_file", `{"path":"notes.txt"}`), Chunks: 12},
		llmtest.Reply{Text: "Your note says: buy milk"},
	))
	sid := h.session()
	evs := h.turn(sid, "what is in my notes?")

	assert.NotContains(t, tokens(evs), "tool_call", "markup never reaches the live stream")
	assert.NotContains(t, tokens(evs), "{", "markup never reaches the live stream")
	first := find(evs, runtime.EvAssistant)[0]
	require.Len(t, first.ToolCalls, 1)
	assert.Equal(t, "read_file", first.ToolCalls[0].Name)
	assert.NotContains(t, first.Content, "tool_call")
	assert.Equal(t, "buy milk", find(evs, runtime.EvToolResult)[0].Content)
	assert.Equal(t, "Your note says: buy milk", find(evs, runtime.EvAssistant)[1].Content)
}

func TestLoop_ToolFailuresGoToTheModel(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Arguments: `{"path":"../../etc/passwd"}`},
			{Name: "launch_rockets", Arguments: `{}`},
			{Name: "read_file", Arguments: `{"path":42}`},
		}},
		llmtest.Reply{Text: "sorry"},
	))
	sid := h.session()
	evs := h.turn(sid, "do things")
	results := find(evs, runtime.EvToolResult)
	require.Len(t, results, 3, "%+v", evs)
	var all string
	for _, r := range results {
		assert.False(t, r.Success, r.Content)
		all += r.Content + "\n"
	}
	assert.Contains(t, all, "outside the workspace")
	assert.Contains(t, all, "Tool execution failed: tool not found: launch_rockets")
	assert.Contains(t, all, "failed to parse tool arguments")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	// Every call got its answer, in the request too.
	tools := 0
	for _, m := range h.fake.Requests()[1].Messages {
		if m.Role == "tool" {
			tools++
		}
	}
	assert.Equal(t, 3, tools)
}

func TestLoop_ProviderErrorLeavesSessionUsable(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`},
		llmtest.Reply{Text: "back"},
	))
	sid := h.session()
	evs := h.turn(sid, "hi")
	assert.Equal(t, runtime.TurnFailed, evs[len(evs)-1].Reason)
	errs := find(evs, runtime.EvError)
	require.Len(t, errs, 1)
	assert.Equal(t, "model_not_found", errs[0].Code)
	assert.Contains(t, errs[0].Content, "ollama pull qwen3:1.7b")

	evs = h.turn(sid, "again")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	// The failed message stays in the context.
	msgs := h.fake.Requests()[1].Messages
	assert.Equal(t, "hi", msgs[1].Content)
	assert.Equal(t, "again", msgs[2].Content)
}

func TestLoop_Cancel(t *testing.T) {
	h := newHarness(t, llmtest.Script(
		llmtest.Reply{Text: "a long answer that stalls", Chunks: 5, Fault: llmtest.Stall, FaultAfter: 2},
		llmtest.Reply{Text: "fresh"},
	))
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "talk"})
	require.NoError(t, err)
	// Wait for the first token: the turn is streaming.
	for e := range sub.C() {
		if e.Type == runtime.EvToken {
			break
		}
	}
	ok, err := h.loop.Cancel(ctx, sid)
	require.NoError(t, err)
	assert.True(t, ok)
	evs := collect(ctx, t, sub)
	assert.Equal(t, runtime.TurnCancelled, evs[len(evs)-1].Reason)
	kept := find(evs, runtime.EvAssistant)
	require.Len(t, kept, 1, "the part the user saw is kept")
	assert.True(t, strings.HasPrefix("a long answer that stalls", kept[0].Content), kept[0].Content)
	sub.Close()

	evs = h.turn(sid, "next")
	assert.Equal(t, "fresh", find(evs, runtime.EvAssistant)[0].Content)
	msgs := h.fake.Requests()[1].Messages
	assert.Equal(t, []string{"user", "assistant", "user"}, []string{msgs[1].Role, msgs[2].Role, msgs[3].Role})
}

func TestLoop_ConversationSurvivesRestart(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "my name is Ada")
	h.turn(sid, `use read_file {"path":"notes.txt"}`)
	h.restart()
	h.turn(sid, "what is my name?")

	reqs := h.fake.Requests()
	var contents []string
	for _, m := range reqs[len(reqs)-1].Messages {
		contents = append(contents, m.Role+":"+m.Content)
	}
	assert.Equal(t, []string{
		"system:" + agents.PrimeDirectives + "\n\nYou are assistant, a test agent.",
		"user:my name is Ada", "assistant:echo: my name is Ada",
		`user:use read_file {"path":"notes.txt"}`, "assistant:", "tool:buy milk", "assistant:read_file said: buy milk",
		"user:what is my name?",
	}, contents)
	info, err := runtime.ReadSession(h.store, sid)
	require.NoError(t, err)
	assert.Equal(t, 3, info.Turns)
	assert.Equal(t, runtime.SessionActive, info.Status)
}

func TestLoop_InterruptedTurnOnRestart(t *testing.T) {
	for _, policy := range []string{"pause", "continue"} {
		t.Run(policy, func(t *testing.T) {
			stalled := make(chan struct{}, 1)
			var mu sync.Mutex
			n := 0
			h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				n++
				if n == 1 {
					stalled <- struct{}{}
					return llmtest.Reply{Text: "never finished", Fault: llmtest.Stall}
				}
				return llmtest.Reply{Text: "answer to " + r.LastUser()}
			})
			h.agent.Spec.Session.OnDisconnect = agents.OnDisconnect(policy)
			sid := h.session()
			_, err := h.loop.Send(context.Background(), sid, runtime.Input{Content: "first"})
			require.NoError(t, err)
			<-stalled
			h.restart() // the stop leaves the turn active, as a crash would

			if policy == "continue" {
				require.Eventually(t, func() bool {
					info, err := runtime.ReadSession(h.store, sid)
					return err == nil && info.Status == runtime.SessionActive
				}, 10*time.Second, 5*time.Millisecond)
				log := h.durable(sid)
				assert.Equal(t, "answer to first", find(log, runtime.EvAssistant)[0].Content)
				return
			}
			log := h.durable(sid)
			ends := find(log, runtime.EvTurnEnd)
			require.Len(t, ends, 1, "%+v", log)
			assert.Equal(t, runtime.TurnInterrupted, ends[0].Reason)
			evs := h.turn(sid, "second")
			assert.Equal(t, "answer to second", find(evs, runtime.EvAssistant)[0].Content)
		})
	}
}

func TestLoop_TurnLimitQueues(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, peak := 0, 0
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		return llmtest.Reply{Text: "ok " + r.LastUser()}
	})
	h.restart()
	h.opts.MaxTurns = 1
	h.restart()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var subs []*runtime.Subscription
	for i := range 3 {
		sid := h.session()
		sub, err := h.loop.Subscribe(ctx, sid)
		require.NoError(t, err)
		subs = append(subs, sub)
		_, err = h.loop.Send(ctx, sid, runtime.Input{Content: strings.Repeat("x", i+1)})
		require.NoError(t, err)
	}
	close(release)
	for _, sub := range subs {
		evs := collect(ctx, t, sub)
		assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	}
	assert.Equal(t, 1, peak, "only one turn at a time")
}

func TestLoop_MessagesDuringATurnStartTheNext(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		once.Do(func() { <-release })
		return llmtest.Reply{Text: "re: " + r.LastUser()}
	})
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "one"})
	require.NoError(t, err)
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "two"})
	require.NoError(t, err)
	close(release)
	first := collect(ctx, t, sub)
	second := collect(ctx, t, sub)
	assert.Equal(t, "re: one", find(first, runtime.EvAssistant)[0].Content)
	assert.Equal(t, "re: two", find(second, runtime.EvAssistant)[0].Content)
	// "two" was stored when it arrived, but reached the model after the
	// first answer.
	msgs := h.fake.Requests()[1].Messages
	assert.Equal(t, []string{"one", "re: one", "two"}, []string{msgs[1].Content, msgs[2].Content, msgs[3].Content})
}

func TestLoop_UnknownSessionAndAgent(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	_, err := h.loop.Send(ctx, "nope", runtime.Input{Content: "x"})
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
	_, err = h.loop.CreateSession(ctx, runtime.NewSession{Agent: "ghost"})
	assert.ErrorContains(t, err, "agent not found")
	_, err = h.loop.Send(ctx, h.session(), runtime.Input{})
	assert.ErrorContains(t, err, "empty")
}

func TestLoop_DeleteSession(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "hi")
	require.NoError(t, h.loop.DeleteSession(context.Background(), sid))
	_, err := runtime.ReadSession(h.store, sid)
	assert.ErrorIs(t, err, runtime.ErrSessionNotFound)
	assert.ErrorIs(t, h.loop.DeleteSession(context.Background(), sid), runtime.ErrSessionNotFound)
}

func TestLoop_CursorCommitsWithTheMessage(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	_, err := h.loop.Send(context.Background(), sid, runtime.Input{Content: "from telegram",
		Cursor: &runtime.Cursor{Key: "telegram/offset", Value: []byte("1001")}})
	require.NoError(t, err)
	v, err := runtime.ReadKV(h.store, "telegram/offset")
	require.NoError(t, err)
	assert.Equal(t, "1001", string(v), "the cursor is committed by the time Send returns")

	h.restart()
	v, err = runtime.ReadKV(h.store, "telegram/offset")
	require.NoError(t, err)
	assert.Equal(t, "1001", string(v))
	msgs := find(h.durable(sid), runtime.EvUserMessage)
	assert.Equal(t, "from telegram", msgs[0].Content)
}
