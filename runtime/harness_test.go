package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/anthropic"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/runtime/llm/openai"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/storage"
)

// loader serves fixed agents.
type loader map[string]*runtime.LoadedAgent

func (l loader) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	if a, ok := l[name]; ok {
		return a, nil
	}
	return nil, errors.New("agent not found: " + name)
}

// harness is a loop on a temporary store, talking to a fake Ollama.
type harness struct {
	t      *testing.T
	dir    string
	fake   *llmtest.Server
	agent  *runtime.LoadedAgent
	store  *storage.Store
	loop   *runtime.Loop
	stop   context.CancelFunc
	exited chan error
	opts   runtime.Options
}

func newHarness(t *testing.T, h llmtest.Handler) *harness {
	t.Helper()
	return newHarnessKind(t, llmtest.Ollama, h)
}

// newHarnessKind talks to a fake of the given wire format through the
// matching real client.
func newHarnessKind(t *testing.T, kind llmtest.Kind, h llmtest.Handler) *harness {
	t.Helper()
	fake := llmtest.NewHandler(t, kind, h)
	return newHarnessClient(t, fake, nil)
}

// newHarnessClient talks to fake through client (nil: a default one).
func newHarnessClient(t *testing.T, fake *llmtest.Server, client *http.Client) *harness {
	t.Helper()
	kind := fake.Kind
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("buy milk"), 0o644))
	spec := &agents.Agent{
		Name:      "assistant",
		Workspace: ws,
		Soul:      "You are {{agent.name}}, a test agent.",
		Model:     agents.Model{Provider: "ollama", Name: "qwen3:1.7b", KeepAlive: "5m"},
		Session: agents.Session{
			OnDisconnect: "pause", MaxToolIterations: 10, LLMTimeoutSeconds: 30,
			Context: agents.Context{MaxHistoryTokens: 20000, MaxToolResultTokens: 8000, ToolResultTruncation: "head"},
		},
	}
	httpOpts := llm.Options{MaxAttempts: 1, IdleTimeout: 5 * time.Second, FirstTokenTimeout: 5 * time.Second, HTTPClient: client}
	var p runtime.Provider = ollama.New(ollama.Options{BaseURL: fake.BaseURL(), HTTP: httpOpts})
	switch kind {
	case llmtest.OpenAI:
		p = openai.New(openai.Options{BaseURL: fake.BaseURL(), APIKey: "sk-test", KeyEnv: "OPENAI_API_KEY", HTTP: httpOpts})
	case llmtest.Anthropic:
		p = anthropic.New(anthropic.Options{BaseURL: fake.BaseURL(), APIKey: "sk-ant-test", KeyEnv: "ANTHROPIC_API_KEY", HTTP: httpOpts})
	}
	agent := &runtime.LoadedAgent{
		Spec:     spec,
		Provider: p,
		Tools:    []runtime.Tool{&tools.ReadFile{Workspace: ws}, &tools.ListDir{Workspace: ws}},
	}
	hs := &harness{t: t, dir: dir, fake: fake, agent: agent,
		opts: runtime.Options{Agents: loader{"assistant": agent}, CheckpointEvery: 5}}
	hs.start()
	t.Cleanup(hs.close)
	return hs
}

func (h *harness) start() {
	st, err := storage.Open(filepath.Join(h.dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(h.t, err)
	h.store = st
	o := h.opts
	o.Store = st
	h.loop = runtime.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	h.exited = make(chan error, 1)
	go func() { h.exited <- h.loop.Run(ctx) }()
	select {
	case <-h.loop.Ready():
	case err := <-h.exited:
		h.t.Fatalf("loop stopped: %v", err)
	}
}

// restart stops the loop and the store and opens them again, as a
// restart of the daemon would.
func (h *harness) restart() {
	h.close()
	h.start()
}

func (h *harness) close() {
	if h.store == nil {
		return
	}
	h.stop()
	require.NoError(h.t, <-h.exited)
	require.NoError(h.t, h.store.Close())
	h.store = nil
}

func (h *harness) session() string {
	info, err := h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant", Gateway: "test"})
	require.NoError(h.t, err)
	return info.ID
}

// turn sends text and returns every event up to and including turn_end.
func (h *harness) turn(sid, text string) []runtime.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(h.t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: text})
	require.NoError(h.t, err)
	return collect(ctx, h.t, sub)
}

func collect(ctx context.Context, t *testing.T, sub *runtime.Subscription) []runtime.Event {
	t.Helper()
	var evs []runtime.Event
	for {
		select {
		case e, ok := <-sub.C():
			require.True(t, ok, "subscription closed before turn_end")
			evs = append(evs, e)
			if e.Type == runtime.EvTurnEnd {
				return evs
			}
		case <-ctx.Done():
			t.Fatalf("no turn_end; got %v", evs)
		}
	}
}

// durable returns the events of the session's log.
func (h *harness) durable(sid string) []runtime.Event {
	var evs []runtime.Event
	require.NoError(h.t, runtime.ReadEvents(h.store, sid, 0, func(e runtime.Event) error {
		evs = append(evs, e)
		return nil
	}))
	return evs
}

func types(evs []runtime.Event) []runtime.EventType {
	var out []runtime.EventType
	for _, e := range evs {
		if e.Type != runtime.EvToken {
			out = append(out, e.Type)
		}
	}
	return out
}

func tokens(evs []runtime.Event) string {
	var s string
	for _, e := range evs {
		if e.Type == runtime.EvToken {
			s += e.Content
		}
	}
	return s
}

func find(evs []runtime.Event, typ runtime.EventType) []runtime.Event {
	var out []runtime.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
