package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
)

// instant is a provider that answers at once, so a benchmark measures the
// runtime's own overhead per turn: the loop, the events, the commit.
type instant struct{}

func (instant) Stream(_ context.Context, req *runtime.Request, onDelta func(runtime.Delta)) (*runtime.Response, error) {
	onDelta(runtime.Delta{Text: "ok"})
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "ok"},
		Usage: runtime.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
}

// BenchmarkLoop_Turn is the runtime overhead of one turn (user message,
// model answer, turn end: three events, two commits) with the model's time
// taken out. "fsync" commits as in production; "nosync" shows the CPU part.
// "http" adds the real Ollama client and a loopback fake server.
func BenchmarkLoop_Turn(b *testing.B) {
	for _, c := range []struct {
		name   string
		noSync bool
		http   bool
	}{{"fsync", false, false}, {"nosync", true, false}, {"nosync-http", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			var p runtime.Provider = instant{}
			if c.http {
				fake := llmtest.NewHandler(b, llmtest.Ollama, llmtest.Echo())
				p = ollama.New(ollama.Options{BaseURL: fake.BaseURL()})
			}
			st, err := storage.Open(filepath.Join(b.TempDir(), "agnx.db"), &storage.Options{NoSync: c.noSync})
			require.NoError(b, err)
			defer st.Close()
			agent := &runtime.LoadedAgent{Provider: p, Spec: &agents.Agent{Name: "assistant",
				Session: agents.Session{Context: agents.Context{MaxHistoryTokens: 2000}}}}
			loop := runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- loop.Run(ctx) }()
			defer func() { cancel(); <-done }()
			info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
			require.NoError(b, err)
			sub, err := loop.Subscribe(ctx, info.ID)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := loop.Send(ctx, info.ID, runtime.Input{Content: "hello"}); err != nil {
					b.Fatal(err)
				}
				for e := range sub.C() {
					if e.Type == runtime.EvTurnEnd {
						break
					}
				}
			}
		})
	}
}
