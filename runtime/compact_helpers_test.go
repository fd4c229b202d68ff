package runtime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

// scripted is a model in process: summary calls (recognised by their
// instructions) get summarize's answer, the others answer's. It keeps
// every request it served.
type scripted struct {
	mu        sync.Mutex
	answer    func(req *Request) (*Response, error)
	summarize func(req *Request) (*Response, error)
	reqs      []*Request
}

func (p *scripted) Stream(_ context.Context, req *Request, _ func(Delta)) (*Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	if isSummaryCall(req) {
		return p.summarize(req)
	}
	return p.answer(req)
}

func (p *scripted) requests() []*Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Request(nil), p.reqs...)
}

func isSummaryCall(req *Request) bool {
	return strings.HasPrefix(req.System, "You summarise a conversation")
}

func say(text string) *Response {
	return &Response{Message: Message{Role: RoleAssistant, Content: text}, Usage: Usage{PromptTokens: 5, CompletionTokens: 2}}
}

// summaries answers summary calls with a numbered summary.
func summaries() func(*Request) (*Response, error) {
	var mu sync.Mutex
	n := 0
	return func(*Request) (*Response, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		r := say(fmt.Sprintf("summary %d: the user talks about milk", n))
		r.Usage = Usage{PromptTokens: 1000, CompletionTokens: 50}
		return r, nil
	}
}

func failing(*Request) (*Response, error) {
	return nil, &ProviderError{Kind: ErrServer, Message: "the model server failed"}
}

// lookup is a tool with a longish result.
type lookup struct{}

func (lookup) Spec() ToolSpec {
	return ToolSpec{Name: "lookup", Description: "look up", Schema: []byte(`{"type":"object"}`)}
}

func (lookup) Run(context.Context, []byte) (Result, error) {
	return Result{Content: strings.Repeat("found ", 100)}, nil
}

func compactAgent(p Provider, budget int) *LoadedAgent {
	return &LoadedAgent{Provider: p, Tools: []Tool{lookup{}}, Spec: &agents.Agent{Name: "assistant",
		Model:   agents.Model{Name: "m", MaxInputTokens: 1 << 20},
		Session: agents.Session{MaxToolIterations: 5, Context: agents.Context{MaxHistoryTokens: budget}}}}
}

// testLoop runs a loop over the store in dir (opened here) until the
// returned stop; it is stopped at the test's end too.
func testLoop(t *testing.T, dir string, ag *LoadedAgent) (*Loop, *storage.Store, func()) {
	t.Helper()
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	l := New(Options{Store: st, Agents: oneAgent{ag}})
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() { exited <- l.Run(ctx) }()
	<-l.Ready()
	stop := sync.OnceFunc(func() {
		cancel()
		assert.NoError(t, <-exited)
		assert.NoError(t, st.Close())
	})
	t.Cleanup(stop)
	return l, st, stop
}

// onLoop runs fn on the loop goroutine and waits for it.
func onLoop(t *testing.T, l *Loop, fn func()) {
	t.Helper()
	reply := make(chan result[struct{}], 1)
	_, err := call(context.Background(), l, &funcReq{fn: fn, reply: reply}, reply)
	require.NoError(t, err)
}

type funcReq struct {
	fn    func()
	reply chan result[struct{}]
}

func (r *funcReq) handle(*Loop) {
	r.fn()
	r.reply <- result[struct{}]{}
}

// turnOf sends text and waits for the turn's end.
func turnOf(t *testing.T, l *Loop, sid, text string) []Event {
	t.Helper()
	ctx := context.Background()
	sub, err := l.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = l.Send(ctx, sid, Input{Content: text})
	require.NoError(t, err)
	var evs []Event
	for e := range sub.C() {
		evs = append(evs, e)
		if e.Type == EvTurnEnd {
			return evs
		}
	}
	t.Fatal("the subscription closed before turn_end")
	return nil
}

// window is what must come back the same from a load.
type window struct {
	History    []Message
	HistTokens int
	OpenCalls  []ToolCall
	Pending    []Message
	Approvals  []Approval
	Summary    string
	WindowSeq  uint64
	Marks      []mark
	TurnActive bool
	Rounds     int
	LastSeq    uint64
}

func windowOf(s *state) window {
	nilIfEmpty := func(m []Message) []Message {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	w := window{History: nilIfEmpty(s.History), HistTokens: s.HistTokens, Pending: nilIfEmpty(s.Pending),
		Summary: s.Summary, WindowSeq: s.WindowSeq, TurnActive: s.TurnActive, Rounds: s.Rounds, LastSeq: s.LastSeq}
	if len(s.OpenCalls) > 0 {
		w.OpenCalls = s.OpenCalls
	}
	for _, a := range s.Approvals {
		a.At = a.At.UTC() // a checkpoint reads times as local, the log as UTC
		w.Approvals = append(w.Approvals, a)
	}
	if len(s.marks) > 0 {
		w.Marks = s.marks
	}
	return w
}

// checkWindow checks the invariants of a window: within budget (when
// budget > 0), its tokens add up, and every tool result follows the call
// it answers.
func checkWindow(t *testing.T, s *state, budget int) {
	t.Helper()
	sum := summaryTokens(s.Summary)
	for i := range s.History {
		sum += estimateTokens(&s.History[i])
	}
	require.Equal(t, sum, s.HistTokens, "HistTokens adds up")
	if budget > 0 {
		require.LessOrEqual(t, s.HistTokens, budget, "the window stays within the budget")
	}
	require.NoError(t, toolPairs(s.History))
}

// toolPairs reports a tool message that does not answer a call of the
// assistant message before its run of tool messages.
func toolPairs(h []Message) error {
	var open map[string]bool
	for i, m := range h {
		switch m.Role {
		case RoleAssistant:
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: tool result %s follows no call of its", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				return fmt.Errorf("message %d: a %s message before calls were answered", i, m.Role)
			}
			open = nil
		}
	}
	return nil
}

var errNoSession = errors.New("no such session resident")

// resident is the session's window, read on the loop.
func resident(t *testing.T, l *Loop, sid string) (w window, st state, err error) {
	t.Helper()
	onLoop(t, l, func() {
		s := l.sessions[sid]
		if s == nil {
			err = errNoSession
			return
		}
		w, st = windowOf(s.st), *s.st
	})
	return w, st, err
}

// reload forgets the resident session and loads it again from its
// checkpoint and log; it returns the window before and after.
func reload(t *testing.T, l *Loop, sid string) (before, after window) {
	t.Helper()
	var err error
	onLoop(t, l, func() {
		s := l.sessions[sid]
		if s == nil {
			err = errNoSession
			return
		}
		before = windowOf(s.st)
		l.drop(s, nil)
		if s, err = l.load(sid); err == nil {
			after = windowOf(s.st)
		}
	})
	require.NoError(t, err)
	return before, after
}
