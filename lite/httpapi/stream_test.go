package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// postStream sends a message to the stream route and reads the whole turn.
func (e *apiEnv) postStream(sid, content string) []sseEv {
	e.t.Helper()
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/stream?events=all", `{"content":"`+content+`"}`)
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	require.Equal(e.t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(e.t, "no-cache", resp.Header.Get("Cache-Control"))
	return newSSEScan(resp.Body).all()
}

func TestStream_TurnAsSSE(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	evs := e.postStream(sid, "use list_dir {} please")
	require.NotEmpty(t, evs)

	names := make([]string, len(evs))
	for i, ev := range evs {
		names[i] = ev.Name
	}
	assert.Equal(t, "start", evs[0].Name, "start comes first: %v", names)
	assert.Equal(t, "done", evs[len(evs)-1].Name, "done comes last: %v", names)
	assert.Subset(t, names, []string{"message", "tool_call", "tool_result", "token"})

	// Every durable event carries its seq; tokens carry none.
	var last uint64
	for _, ev := range evs {
		if ev.Name == "token" {
			assert.False(t, ev.HasID, "a token has no id")
			continue
		}
		require.True(t, ev.HasID, "%s has an id", ev.Name)
		assert.Greater(t, ev.ID, last, "ids increase")
		last = ev.ID
	}
	// The ids after start are exactly the log's events of the turn.
	logged := e.logSeqs(sid)
	assert.Equal(t, logged[1:], streamIDs(evs[1:]), "the stream carries every event of the turn")
	assert.Equal(t, logged[0], evs[0].ID, "start's id is the user message's seq")

	var start map[string]any
	evs[0].decode(t, &start)
	assert.Empty(t, start)
	for _, ev := range evs {
		switch ev.Name {
		case "token":
			var d struct{ Content string }
			ev.decode(t, &d)
			assert.NotEmpty(t, d.Content)
		case "tool_call":
			var d struct {
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			ev.decode(t, &d)
			assert.NotEmpty(t, d.CallID)
			assert.Equal(t, "list_dir", d.Name)
			assert.JSONEq(t, `{}`, d.Arguments)
		case "tool_result":
			var d struct {
				CallID  string `json:"call_id"`
				Content string `json:"content"`
				Success *bool  `json:"success"`
			}
			ev.decode(t, &d)
			assert.NotEmpty(t, d.CallID)
			require.NotNil(t, d.Success)
			assert.True(t, *d.Success)
		case "message":
			var d struct {
				Content   *string          `json:"content"`
				ToolCalls []map[string]any `json:"tool_calls"`
			}
			ev.decode(t, &d)
			require.NotNil(t, d.Content)
			assert.NotNil(t, d.ToolCalls, "tool_calls is always an array")
		}
	}
	var done struct {
		Status string `json:"status"`
		Usage  struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		} `json:"usage"`
	}
	evs[len(evs)-1].decode(t, &done)
	assert.Equal(t, "completed", done.Status)
	assert.Positive(t, done.Usage.Prompt)
	assert.Positive(t, done.Usage.Completion)
	assert.Equal(t, done.Usage.Prompt+done.Usage.Completion, done.Usage.Total)
}

func TestEvents_ReplayFromZero(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	e.postStream(sid, "one")
	e.postStream(sid, "use list_dir {}")

	_, r := e.openStream(t.Context(), sid, "")
	want := e.logSeqs(sid)
	var got []sseEv
	for len(streamIDs(got)) < len(want) {
		ev, ok := r.next()
		require.True(t, ok, "the stream stays open after the replay")
		got = append(got, ev)
	}
	assert.Equal(t, want, streamIDs(got))
	assert.Equal(t, "user_message", got[0].Name)
	var um struct{ Content string }
	got[0].decode(t, &um)
	assert.Equal(t, "one", um.Content)
	for _, ev := range got {
		assert.NotEqual(t, "token", ev.Name, "tokens are not replayed")
	}

	// ?until=turn_end stops after the first turn_end after the resume point.
	_, r = e.openStream(t.Context(), sid, "?until=turn_end")
	first := r.all()
	assert.Equal(t, "done", first[len(first)-1].Name)
	assert.Equal(t, want[:len(streamIDs(first))], streamIDs(first))

	// ?after=N is Last-Event-ID in the query.
	_, r = e.openStream(t.Context(), sid, fmt.Sprintf("?after=%d&until=turn_end", want[2]))
	assert.Equal(t, want[3], streamIDs(r.all())[0])
	// With both, the later wins: a browser's EventSource opened with
	// ?after= sends Last-Event-ID by itself when it reconnects.
	_, r = e.openStream(t.Context(), sid, fmt.Sprintf("?after=%d&until=turn_end", want[0]),
		fmt.Sprintf("Last-Event-ID: %d", want[2]))
	assert.Equal(t, want[3], streamIDs(r.all())[0])

	resp := e.do("GET", "/api/v1/sessions/"+sid+"/events", "", "Last-Event-ID: abc")
	requireProblem(t, resp, http.StatusBadRequest, "invalid_request")
	resp = e.do("GET", "/api/v1/sessions/nope/events", "")
	requireProblem(t, resp, http.StatusNotFound, "session_not_found")
}

// gate is a model whose second call of each turn waits until released, so
// a test can act while a turn is half done.
type gate struct {
	release chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) handler(t *testing.T) llmtest.Handler {
	echo := llmtest.Echo()
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "tool" {
			select {
			case <-g.release:
			case <-t.Context().Done():
			}
			return llmtest.Reply{Text: "the folder is " + strings.Repeat("quite ", 40) + "empty"}
		}
		return echo(r)
	}
}

// TestEvents_ResumeAfterDrop reads part of a turn, drops the connection,
// reconnects with Last-Event-ID and checks that the two streams together
// carry every durable event of the log once.
func TestEvents_ResumeAfterDrop(t *testing.T) {
	for _, tc := range []struct {
		dropAfter     int  // durable events read before the drop
		releaseBefore bool // the turn goes on before the client is back
	}{{1, false}, {2, false}, {3, true}, {4, false}, {1, true}, {2, true}} {
		t.Run(fmt.Sprintf("after%d/release%v", tc.dropAfter, tc.releaseBefore), func(t *testing.T) {
			g := newGate()
			e := newAPIEnv(t, g.handler(t))
			sid := e.session()
			ctx, drop := context.WithCancel(t.Context())
			_, r := e.openStream(ctx, sid, "")

			sent := make(chan struct{})
			go func() {
				defer close(sent)
				resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`)
				resp.Body.Close()
			}()
			var first []sseEv
			for len(streamIDs(first)) < tc.dropAfter {
				ev, ok := r.next()
				require.True(t, ok)
				first = append(first, ev)
			}
			drop()
			if tc.releaseBefore {
				g.open()
				<-sent
			}
			seen := streamIDs(first)
			_, r2 := e.openStream(t.Context(), sid, "?until=turn_end", fmt.Sprintf("Last-Event-ID: %d", seen[len(seen)-1]))
			g.open()
			second := r2.all()
			<-sent
			require.Equal(t, "done", second[len(second)-1].Name)
			assert.Equal(t, e.logSeqs(sid), append(seen, streamIDs(second)...), "no event lost or doubled")
		})
	}
}

// TestEvents_FiftyClients follows one session from 50 streams at once:
// all of them see the same durable events, those of the log.
func TestEvents_FiftyClients(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	const n = 50
	readers := make([]*sseScan, n)
	for i := range readers {
		_, readers[i] = e.openStream(t.Context(), sid, "?until=turn_end")
	}
	got := make([][]sseEv, n)
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Go(func() { got[i] = r.all() })
	}
	var answer struct{ Content string }
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {} for all of you"}`, http.StatusOK, &answer)
	wg.Wait()
	want := e.logSeqs(sid)
	for i := range got {
		require.NotEmpty(t, got[i], "client %d", i)
		assert.Equal(t, "done", got[i][len(got[i])-1].Name, "client %d", i)
		assert.Equal(t, want, streamIDs(got[i]), "client %d", i)
	}
	assert.True(t, strings.HasPrefix(answer.Content, "list_dir said: "), answer.Content)
}

// TestEvents_TokensStreamLive: a client following a session sees the
// tokens of an answer as they stream, not only once the answer is stored.
// The model stalls after two words; the words must arrive anyway.
func TestEvents_TokensStreamLive(t *testing.T) {
	e := newAPIEnv(t, llmtest.Script(llmtest.Reply{Text: "one two three four", Fault: llmtest.Stall, FaultAfter: 2}))
	sid := e.session()
	_, r := e.openStream(t.Context(), sid, "")
	status := make(chan string, 1)
	go func() {
		var out struct{ Status string }
		e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"count"}`, http.StatusOK, &out)
		status <- out.Status
	}()
	var got []string
	for len(got) < 3 {
		ev, ok := r.next()
		require.True(t, ok)
		got = append(got, ev.Name+" "+ev.Data)
	}
	assert.Equal(t, []string{`user_message {"content":"count"}`, `token {"content":"one "}`, `token {"content":"two "}`}, got)

	var c struct{ Cancelled bool }
	e.call("POST", "/api/v1/sessions/"+sid+"/cancel", "", http.StatusOK, &c)
	assert.True(t, c.Cancelled)
	var rest []string
	for len(rest) < 2 {
		ev, ok := r.next()
		require.True(t, ok)
		rest = append(rest, ev.Name+" "+ev.Data)
	}
	assert.Equal(t, []string{`message {"content":"one two ","tool_calls":[]}`, "cancelled {}"}, rest)
	assert.Equal(t, "cancelled", <-status)
}
