package httpapi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/storage"
)

// clientRig is the real API handler over a real loop and store, talking
// to a fake Ollama, served by httptest; the handler can drop a stream's
// connection once after a number of bytes.
type clientRig struct {
	t        *testing.T
	fake     *llmtest.Server
	store    *storage.Store
	loop     *runtime.Loop
	srv      *httptest.Server
	client   *httpapi.Client
	shutdown chan struct{}
	// dropAfter, when > 0, cuts the next POST .../stream connection after
	// that many body bytes; it is cleared when used.
	dropAfter atomic.Int64
	// resumes counts GET .../events requests that carried Last-Event-ID.
	resumes atomic.Int64
}

type clientAgents struct{ a *agents.Agent }

func (c clientAgents) List() ([]httpapi.AgentInfo, error) {
	return []httpapi.AgentInfo{{Name: c.a.Name, Provider: c.a.Model.Provider, Model: c.a.Model.Name}}, nil
}

func (c clientAgents) Get(name string) (*agents.Agent, error) {
	if name != c.a.Name {
		return nil, os.ErrNotExist
	}
	return c.a, nil
}

func (c clientAgents) Reload() []httpapi.AgentInfo {
	return []httpapi.AgentInfo{{Name: c.a.Name}, {Name: "broken", Err: "agents/broken/agent.yaml:3: unknown field"}}
}

type clientLoader map[string]*runtime.LoadedAgent

func (l clientLoader) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	if a, ok := l[name]; ok {
		return a, nil
	}
	return nil, runtime.ErrAgentNotFound
}

type clientConnKey struct{}

func newClientRig(t *testing.T, h llmtest.Handler, o httpapi.Options) *clientRig {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	r := &clientRig{t: t, fake: llmtest.NewHandler(t, llmtest.Ollama, h), shutdown: make(chan struct{}, 1)}
	spec := &agents.Agent{
		Name: "assistant", Workspace: ws, Soul: "You are a test agent.",
		Model: agents.Model{Provider: "ollama", Name: "qwen3:1.7b"},
		Session: agents.Session{OnDisconnect: "continue", MaxToolIterations: 5, LLMTimeoutSeconds: 30,
			Context: agents.Context{MaxHistoryTokens: 20000, MaxToolResultTokens: 8000, ToolResultTruncation: "head"}},
	}
	p := ollama.New(ollama.Options{BaseURL: r.fake.BaseURL(), HTTP: llm.Options{MaxAttempts: 1, IdleTimeout: 5 * time.Second}})
	la := &runtime.LoadedAgent{Spec: spec, Provider: p, Tools: []runtime.Tool{&tools.ListDir{Workspace: ws}}}
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	r.store = st
	r.loop = runtime.New(runtime.Options{Store: st, Agents: clientLoader{"assistant": la}})
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() { exited <- r.loop.Run(ctx) }()
	o.Loop, o.Agents, o.Version = r.loop, clientAgents{spec}, "test"
	o.KeepAlive = -1
	o.Shutdown = func() { r.shutdown <- struct{}{} }
	api := httpapi.New(o)
	r.srv = httptest.NewUnstartedServer(r.wrap(api))
	r.srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, clientConnKey{}, c)
	}
	r.srv.Start()
	t.Cleanup(func() {
		api.Close()
		r.srv.Close()
		cancel()
		require.NoError(t, <-exited)
		require.NoError(t, st.Close())
	})
	r.client = httpapi.NewClient(r.srv.URL, httpapi.ClientOptions{APIToken: o.APIToken, SenderID: "test"})
	return r
}

func (r *clientRig) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "GET" && req.Header.Get("Last-Event-ID") != "" {
			r.resumes.Add(1)
		}
		if n := r.dropAfter.Swap(0); n > 0 && req.Method == "POST" && filepath.Base(req.URL.Path) == "stream" {
			w = &clientDropWriter{ResponseWriter: w, left: n, conn: req.Context().Value(clientConnKey{}).(net.Conn)}
		} else if n > 0 {
			r.dropAfter.Store(n)
		}
		h.ServeHTTP(w, req)
	})
}

// clientDropWriter passes on `left` bytes of the body, then closes the
// connection under the server, as a network failure would.
type clientDropWriter struct {
	http.ResponseWriter
	left int64
	conn net.Conn
}

var errClientDropped = errors.New("connection dropped by the test")

func (d *clientDropWriter) Write(b []byte) (int, error) {
	if d.left <= 0 {
		return 0, errClientDropped
	}
	if int64(len(b)) <= d.left {
		d.left -= int64(len(b))
		return d.ResponseWriter.Write(b)
	}
	n, _ := d.ResponseWriter.Write(b[:d.left])
	d.left = 0
	_ = http.NewResponseController(d.ResponseWriter).Flush()
	_ = d.conn.Close()
	return n, errClientDropped
}

func (d *clientDropWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// logSeqs returns the seqs of the session's log after `after`.
func (r *clientRig) logSeqs(sid string, after uint64) []uint64 {
	var out []uint64
	require.NoError(r.t, runtime.ReadEvents(r.store, sid, after, func(e runtime.Event) error {
		out = append(out, e.Seq)
		return nil
	}))
	return out
}

func (r *clientRig) session() string {
	info, err := r.client.CreateSession(context.Background(), "assistant")
	require.NoError(r.t, err)
	return info.ID
}
