package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func clientCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// answer rebuilds what a terminal shows of a turn: tokens as they come,
// reconciled with each final message (tokens are lossy).
func clientAnswer(evs []runtime.Event) string {
	var out, round strings.Builder
	for _, e := range evs {
		switch e.Type {
		case runtime.EvToken:
			out.WriteString(e.Content)
			round.WriteString(e.Content)
		case runtime.EvAssistant:
			if rest, ok := strings.CutPrefix(e.Content, round.String()); ok {
				out.WriteString(rest)
			}
			round.Reset()
		}
	}
	return out.String()
}

func clientDurableSeqs(evs []runtime.Event) []uint64 {
	var out []uint64
	for _, e := range evs {
		if e.Durable() {
			out = append(out, e.Seq)
		}
	}
	return out
}

func TestClient_SessionsAndAgents(t *testing.T) {
	r := newClientRig(t, llmtest.Echo(), httpapi.Options{})
	ctx := clientCtx(t)
	created, err := r.client.CreateSession(ctx, "assistant")
	require.NoError(t, err)
	assert.Equal(t, "assistant", created.Agent)
	assert.Equal(t, runtime.SessionActive, created.Status)

	got, err := r.client.Session(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, created.ID, got.ID)
	list, err := r.client.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, created.ID, list[0].ID)

	a, err := r.client.Agent(ctx, "assistant")
	require.NoError(t, err)
	assert.Equal(t, "qwen3:1.7b", a.Spec.Model.Name)

	_, err = r.client.Session(ctx, "nope")
	var pe *httpapi.ProblemError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "session_not_found", pe.Code)
	assert.Equal(t, "no session nope", err.Error())
	_, err = r.client.CreateSession(ctx, "ghost")
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 404, pe.Status)
	_, err = r.client.Agent(ctx, "ghost")
	assert.EqualError(t, err, "no agent ghost")
}

func TestClient_SendAndStream(t *testing.T) {
	r := newClientRig(t, llmtest.Echo(), httpapi.Options{})
	ctx := clientCtx(t)
	sid := r.session()
	reply, err := r.client.Send(ctx, sid, "hello")
	require.NoError(t, err)
	assert.Equal(t, "echo: hello", reply.Content)
	assert.Equal(t, runtime.TurnCompleted, reply.Status)

	var evs []runtime.Event
	require.NoError(t, r.client.Stream(ctx, sid, "use list_dir {}", func(e runtime.Event) error {
		evs = append(evs, e)
		return nil
	}))
	assert.Equal(t, "list_dir said: . is empty", clientAnswer(evs))
	last := evs[len(evs)-1]
	assert.Equal(t, runtime.EvTurnEnd, last.Type)
	assert.Equal(t, runtime.TurnCompleted, last.Reason)
	assert.NotZero(t, last.Usage.Total())
	// Every durable event of the turn, once, in order: all of the log after
	// the user message.
	assert.Equal(t, r.logSeqs(sid, reply.Seq+1), clientDurableSeqs(evs))
	var types []runtime.EventType
	for _, e := range evs {
		if e.Durable() {
			types = append(types, e.Type)
		}
	}
	assert.Equal(t, []runtime.EventType{runtime.EvAssistant, runtime.EvToolCall, runtime.EvToolResult,
		runtime.EvAssistant, runtime.EvTurnEnd}, types)

	stop := errors.New("stop")
	err = r.client.Stream(ctx, sid, "again", func(runtime.Event) error { return stop })
	assert.ErrorIs(t, err, stop, "an error from fn ends the stream")
}

// TestClient_StreamResumes cuts the stream's connection at many points of
// a turn: the client resumes from the log and its callback sees every
// durable event exactly once and the whole answer.
func TestClient_StreamResumes(t *testing.T) {
	long := "one two three four five six seven eight nine ten eleven twelve"
	r := newClientRig(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		if req.Last().Role == "tool" {
			return llmtest.Reply{Text: long}
		}
		return llmtest.Reply{Text: "let me look ", ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: "{}"}}}
	}, httpapi.Options{})
	ctx := clientCtx(t)
	for _, cut := range []int64{31, 60, 120, 200, 300, 450, 700, 1000} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			sid := r.session()
			before := r.resumes.Load()
			r.dropAfter.Store(cut)
			var evs []runtime.Event
			require.NoError(t, r.client.Stream(ctx, sid, "go", func(e runtime.Event) error {
				evs = append(evs, e)
				return nil
			}))
			assert.Equal(t, "let me look "+long, clientAnswer(evs))
			assert.Equal(t, r.logSeqs(sid, 2), clientDurableSeqs(evs), "each durable event once, in order")
			require.NotEmpty(t, evs)
			assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
			assert.Greater(t, r.resumes.Load(), before, "the stream was resumed")
		})
	}
}

func TestClient_Cancel(t *testing.T) {
	r := newClientRig(t, func(llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "partial answer never finished", Fault: llmtest.Stall, FaultAfter: 1}
	}, httpapi.Options{})
	ctx := clientCtx(t)
	sid := r.session()
	started := make(chan struct{})
	var last runtime.Event
	done := make(chan error, 1)
	go func() {
		first := true
		done <- r.client.Stream(ctx, sid, "talk", func(e runtime.Event) error {
			if first {
				first = false
				close(started)
			}
			last = e
			return nil
		})
	}()
	<-started
	ok, err := r.client.Cancel(ctx, sid)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, <-done)
	assert.Equal(t, runtime.EvTurnEnd, last.Type)
	assert.Equal(t, runtime.TurnCancelled, last.Reason)
	ok, err = r.client.Cancel(ctx, sid)
	require.NoError(t, err)
	assert.False(t, ok, "nothing runs any more")
}

func TestClient_Events(t *testing.T) {
	r := newClientRig(t, llmtest.Echo(), httpapi.Options{})
	ctx := clientCtx(t)
	sid := r.session()
	_, err := r.client.Send(ctx, sid, "first")
	require.NoError(t, err)

	// History from the log, then the live events of a second turn.
	var evs []runtime.Event
	ends := 0
	stop := errors.New("seen enough")
	err = r.client.Events(ctx, sid, 0, false, func(e runtime.Event) error {
		evs = append(evs, e)
		if e.Type != runtime.EvTurnEnd {
			return nil
		}
		if ends++; ends == 1 {
			go func() { _, _ = r.client.Send(ctx, sid, "second") }()
			return nil
		}
		return stop
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, r.logSeqs(sid, 1), clientDurableSeqs(evs), "the whole log but session_start, once")
	assert.Equal(t, "echo: firstecho: second", clientAnswer(evs))
	var users []string
	for _, e := range evs {
		if e.Type == runtime.EvUserMessage {
			users = append(users, e.Content)
		}
	}
	assert.Equal(t, []string{"first", "second"}, users)

	// After a seq, until the turn's end.
	var tail []runtime.Event
	require.NoError(t, r.client.Events(ctx, sid, 3, true, func(e runtime.Event) error {
		tail = append(tail, e)
		return nil
	}))
	require.NotEmpty(t, tail)
	assert.Equal(t, uint64(4), tail[len(tail)-1].Seq)

	_, err = r.client.Send(ctx, "nope", "x")
	assert.EqualError(t, err, "no session nope")
	err = r.client.Events(ctx, "nope", 0, true, func(runtime.Event) error { return nil })
	assert.EqualError(t, err, "no session nope")
}

func TestClient_Admin(t *testing.T) {
	r := newClientRig(t, llmtest.Echo(), httpapi.Options{APIToken: "api-secret", AdminToken: "admin-secret"})
	ctx := clientCtx(t)
	_, err := r.client.Status(ctx)
	var pe *httpapi.ProblemError
	require.ErrorAs(t, err, &pe, "the API token is not the admin token")
	assert.Equal(t, 403, pe.Status)
	assert.Equal(t, "forbidden", pe.Code)
	assert.Equal(t, "Admin access denied: missing or wrong token: send Authorization: Bearer <server.admin_token>", err.Error())

	admin := httpapi.NewClient(r.srv.URL, httpapi.ClientOptions{APIToken: "api-secret", AdminToken: "admin-secret"})
	st, err := admin.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "test", st.Version)
	assert.NotZero(t, st.PID)
	list, err := admin.ReloadAgents(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Contains(t, list[1].Err, "agent.yaml:3")
	require.NoError(t, admin.Shutdown(ctx))
	<-r.shutdown

	anon := httpapi.NewClient(r.srv.URL, httpapi.ClientOptions{})
	_, err = anon.Sessions(ctx)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "unauthorized", pe.Code)
	require.NoError(t, anon.Ready(ctx), "health routes are public")
}

func TestClient_NoDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	c := httpapi.NewClient(url, httpapi.ClientOptions{})
	_, err = c.Sessions(clientCtx(t))
	assert.ErrorIs(t, err, httpapi.ErrNoDaemon)
	assert.EqualError(t, err, "no agnx-lite daemon answers at "+url)
	err = c.Stream(clientCtx(t), "x", "hi", func(runtime.Event) error { return nil })
	assert.ErrorIs(t, err, httpapi.ErrNoDaemon)
}
