package runtime_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// BenchmarkCheckpoint is the cost of one turn end (the checkpoint written
// with it) in a session whose window holds 20k or 200k tokens: time per
// turn, and the bytes of the checkpoint it writes ("cp-bytes"). The budget
// is above the window, so nothing is compacted while it runs.
func BenchmarkCheckpoint(b *testing.B) {
	for _, c := range []struct {
		name   string
		tokens int
	}{{"20k", 20_000}, {"200k", 200_000}} {
		b.Run(c.name, func(b *testing.B) {
			st, err := storage.Open(filepath.Join(b.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
			require.NoError(b, err)
			defer st.Close()
			agent := &runtime.LoadedAgent{Provider: instant{}, Spec: &agents.Agent{Name: "assistant",
				Model:   agents.Model{MaxInputTokens: 10 * c.tokens},
				Session: agents.Session{Context: agents.Context{MaxHistoryTokens: 4 * c.tokens}}}}
			loop := runtime.New(runtime.Options{Store: st, Agents: loader{"assistant": agent}})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- loop.Run(ctx) }()
			defer func() { cancel(); <-done }()
			info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
			require.NoError(b, err)
			sub, err := loop.Subscribe(ctx, info.ID)
			require.NoError(b, err)
			turn := func(text string) {
				if _, err := loop.Send(ctx, info.ID, runtime.Input{Content: text}); err != nil {
					b.Fatal(err)
				}
				for e := range sub.C() {
					if e.Type == runtime.EvTurnEnd {
						break
					}
				}
			}
			big := strings.Repeat("lorem ipsum ", 340) // about 1,000 tokens
			for range c.tokens / 1000 {
				turn(big)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				turn("hello")
			}
			b.StopTimer()
			var size int
			require.NoError(b, st.View(func(tx *storage.Tx) error {
				_, cp, err := tx.LatestCheckpoint(info.ID)
				size = len(cp)
				return err
			}))
			b.ReportMetric(float64(size), "cp-bytes")
		})
	}
}
