package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// instant is a provider that answers at once, in process: it isolates the
// cost of HTTP plus the runtime from the model client's.
type instant struct{}

func (instant) Stream(_ context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	text := "echo: " + req.Messages[len(req.Messages)-1].Content
	onDelta(runtime.Delta{Text: text})
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: text},
		Usage: runtime.Usage{PromptTokens: 10, CompletionTokens: 3}}, nil
}

type oneAgent struct{ a *runtime.LoadedAgent }

func (o oneAgent) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	if name != o.a.Spec.Name {
		return nil, runtime.ErrAgentNotFound
	}
	return o.a, nil
}

// newInstantEnv is the API over a loop whose template agent uses instant.
func newInstantEnv(b *testing.B) *apiEnv {
	dir := b.TempDir()
	agentsDir := filepath.Join(dir, "agents")
	adir, err := agents.WriteTemplate(agentsDir, "assistant")
	require.NoError(b, err)
	spec, err := agents.Load(adir)
	require.NoError(b, err)
	spec.Workspace = dir
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(b, err)
	loader := oneAgent{&runtime.LoadedAgent{Spec: spec, Provider: instant{}}}
	loop := runtime.New(runtime.Options{Store: st, Agents: loader})
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- loop.Run(ctx) }()
	b.Cleanup(func() { stop(); <-ran; st.Close() })
	<-loop.Ready()
	cfg := config.Default()
	cfg.DataDir, cfg.AgentsDir = dir, agentsDir
	e := &apiEnv{t: b, cfg: cfg, loop: loop, st: st} // serve reads the config's data dir
	e.serve(dirAgents{agentsDir, loader})
	return e
}

// BenchmarkPostMessage is synchronous messages through POST .../messages
// (store without fsync): one turn per op, one client at a time, a new
// session every 16 messages (its creation is counted).
func BenchmarkPostMessage(b *testing.B) {
	for _, tc := range []struct {
		name string
		env  func(*testing.B) *apiEnv
	}{
		{"ollama-loopback", func(b *testing.B) *apiEnv { return newAPIEnv(b, llmtest.Echo()) }},
		{"in-process", newInstantEnv},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := tc.env(b)
			client := e.srv.Client()
			var url string
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%16 == 0 {
					// Conversations of 16 messages: the history, which
					// every model request carries, stays realistic.
					url = e.srv.URL + "/api/v1/sessions/" + e.session() + "/messages"
				}
				resp, err := client.Post(url, "application/json", strings.NewReader(`{"content":"hello"}`))
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("post: %v %v", err, resp)
				}
				_, _ = resp.Body.Read(make([]byte, 512))
				resp.Body.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkSSEFanout is one turn watched by N SSE subscribers: the time
// until every one of them has read the turn's done. Every 16 turns the
// subscribers move to a new session (untimed), so the history stays short.
func BenchmarkSSEFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			e := newInstantEnv(b)
			done := make(chan struct{}, n)
			client := e.srv.Client()
			var url string
			var cancel context.CancelFunc = func() {}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%16 == 0 {
					b.StopTimer()
					cancel()
					url = e.watched(n, done, &cancel)
					b.StartTimer()
				}
				resp, err := client.Post(url, "application/json", strings.NewReader(`{"content":"hello"}`))
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("post: %v %v", err, resp)
				}
				_, _ = resp.Body.Read(make([]byte, 512))
				resp.Body.Close()
				for range n {
					<-done
				}
			}
			cancel()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subscriber")
		})
	}
}

// watched creates a session followed by n streams that signal done on
// each turn's done, and returns its messages URL.
func (e *apiEnv) watched(n int, done chan<- struct{}, cancel *context.CancelFunc) string {
	sid := e.session()
	ctx, c := context.WithCancel(e.t.Context())
	*cancel = c
	for range n {
		_, r := e.openStream(ctx, sid, "")
		go func() {
			for {
				ev, ok := r.next()
				if !ok {
					return
				}
				if ev.Name == "done" {
					done <- struct{}{}
				}
			}
		}()
	}
	return e.srv.URL + "/api/v1/sessions/" + sid + "/messages"
}
