package autonomy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// The fakes of what the package declares it needs, and a real loop over
// a fresh store whose agents are read from a folder and answer from a
// script.

// reply is one scripted model answer; stall makes the call wait until
// its turn is cancelled.
type reply struct {
	text   string
	tokens int
	stall  bool
}

// script is a runtime.Provider that answers with its replies in order
// (the last one again once they are used) and keeps the requests.
type script struct {
	mu       sync.Mutex
	replies  []reply
	requests []*runtime.Request
}

func (s *script) Stream(ctx context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	r := reply{text: "ok"}
	if len(s.replies) > 0 {
		r = s.replies[0]
		if len(s.replies) > 1 {
			s.replies = s.replies[1:]
		}
	}
	s.mu.Unlock()
	if r.stall {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: r.text},
		Usage: runtime.Usage{PromptTokens: r.tokens, CompletionTokens: r.tokens}, StopReason: "stop"}, nil
}

// lastUser is the last user message of the i-th request.
func (s *script) lastUser(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.requests[i].Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == runtime.RoleUser {
			return msgs[j].Content
		}
	}
	return ""
}

func (s *script) all() []*runtime.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*runtime.Request(nil), s.requests...)
}

// dirAgents reads the agents from their folders at every call, as the
// agent cache does after a reload (Agents and the loop's AgentCache).
type dirAgents struct {
	dir   string
	model runtime.Provider
}

func (d dirAgents) Spec(name string) (*agents.Agent, error) {
	return d.SpecAt(name, filepath.Join(d.dir, name))
}

func (d dirAgents) SpecAt(name, dir string) (*agents.Agent, error) {
	if _, err := os.Stat(filepath.Join(dir, agents.FileName)); !agents.ValidName(name) || errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("agent %s: %w", name, runtime.ErrAgentNotFound)
	}
	return agents.Load(dir)
}

func (d dirAgents) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	spec, err := d.Spec(name)
	if err != nil {
		return nil, err
	}
	return &runtime.LoadedAgent{Spec: spec, Provider: d.model}, nil
}

func (d dirAgents) CachedAgent(string) (*runtime.LoadedAgent, bool) { return nil, false }

// noGateways is a daemon whose gateways do not run: Follow says so, as
// the App's does.
type noGateways struct{}

func (noGateways) Running(string) bool { return false }
func (noGateways) Follow(_ context.Context, gateway, _, _ string) error {
	if gateway == "" {
		return nil
	}
	return fmt.Errorf("gateway %q is not running: its chat gets the message when it starts", gateway)
}

// notes records the notifications.
type notes struct {
	mu  sync.Mutex
	got []notify.Notification
}

func (n *notes) Notify(x notify.Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
}

// env is a running loop over a fresh store, with its agents' folder.
type env struct {
	cfg    *config.Config
	st     *storage.Store
	loop   *runtime.Loop
	agents dirAgents
	model  *script
	chats  *chats.Chats
	notes  *notes
	// hb is told of the loop's turns' ends once it is made.
	hb atomic.Pointer[Heartbeats]
}

func newEnv(t testing.TB, dir string, replies ...reply) *env {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir, cfg.AgentsDir = dir, filepath.Join(dir, "agents")
	require.NoError(t, os.MkdirAll(cfg.AgentsDir, 0o755))
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	e := &env{cfg: cfg, st: st, model: &script{replies: replies}, notes: &notes{}}
	e.agents = dirAgents{dir: cfg.AgentsDir, model: e.model}
	e.loop = runtime.New(runtime.Options{Store: st, Agents: e.agents, TurnEnded: func(te runtime.TurnEnd) {
		if h := e.hb.Load(); h != nil {
			h.TurnEnded(te)
		}
	}})
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- e.loop.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-ran)
		require.NoError(t, st.Close())
	})
	<-e.loop.Ready()
	e.chats = chats.New(e.loop, e.agents, cfg)
	return e
}

// heartbeats makes the heartbeats over the env, told of its turns' ends.
func (e *env) heartbeats(t testing.TB) *Heartbeats {
	h := NewHeartbeats(HeartbeatOptions{AgentsDir: e.cfg.AgentsDir, Loop: e.loop, Agents: e.agents,
		Location: time.Local, Logger: slog.New(slog.DiscardHandler), Notifier: e.notes, Chats: e.chats, Gateways: noGateways{}})
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	e.hb.Store(h)
	return h
}

// rebuilt is the agent cache rebuilding an agent after its files changed:
// the heartbeats are told of the build.
func (e *env) rebuilt(t testing.TB, h *Heartbeats, name string) {
	t.Helper()
	la, err := e.agents.LoadAgent(name)
	require.NoError(t, err)
	h.Built(la)
}
