// Package retention measures what retention does to the database file: its
// size after a long steady chat with and without compaction (discard),
// and after db compact. Run it with
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/retention/
//
// and read the figures it reports (db_MiB, compacted_MiB, free_MiB).
package retention

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
)

type loader map[string]*runtime.LoadedAgent

func (l loader) LoadAgent(name string) (*runtime.LoadedAgent, error) { return l[name], nil }

// turns is the length of the steady chat; retainEvery how many turns go
// between retention passes (the daemon's is hourly).
const (
	turns       = 10_000
	retainEvery = 100
	// windowTurns is the history a checkpoint keeps when it carries no
	// window_seq of its own (checkpoints from before history windows):
	// one is written by hand so the figure can be made either way.
	windowTurns = 20
)

func BenchmarkDBSize10kTurns(b *testing.B) {
	for _, mode := range []string{runtime.CompactionDisabled, runtime.CompactionDiscard} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				chat(b, mode)
			}
		})
	}
}

func chat(b *testing.B, mode string) {
	dir := b.TempDir()
	path := filepath.Join(dir, "agnx.db")
	st, err := storage.Open(path, &storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	fake := llmtest.NewHandler(b, llmtest.Ollama, answer())
	spec := &agents.Agent{Name: "a", Model: agents.Model{Provider: "ollama", Name: "m"},
		Session: agents.Session{OnDisconnect: "pause", MaxToolIterations: 3,
			Context: agents.Context{MaxHistoryTokens: 4000}}}
	agent := &runtime.LoadedAgent{Spec: spec,
		Provider: ollama.New(ollama.Options{BaseURL: fake.BaseURL(), HTTP: llm.Options{MaxAttempts: 1}})}
	loop := runtime.New(runtime.Options{Store: st, Agents: loader{"a": agent}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	info, err := loop.CreateSession(ctx, runtime.NewSession{Agent: "a", Gateway: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	msg := strings.Repeat("a steady chat message of a few words. ", 8) // ~300 bytes, as a chat line
	start := time.Now()
	for i := range turns {
		turn(b, loop, info.ID, fmt.Sprintf("%d %s", i, msg))
		if mode == runtime.CompactionDiscard && (i+1)%retainEvery == 0 {
			retain(b, st, info.ID)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/turns, "us/turn")
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	stats, _ := st.Stats()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(mib(stats.FileSize), "db_MiB")
	b.ReportMetric(mib(int64(stats.FreePages)*int64(os.Getpagesize())), "free_MiB")
	rep, err := storage.Compact(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(mib(rep.After), "compacted_MiB")
}

// answer echoes the chat, and answers a history summary call (context
// compaction) with a summary of a steady size, as a model would: echoing
// the transcript back would make every summary hold all the earlier ones.
func answer() llmtest.Handler {
	echo := llmtest.Echo()
	summary := strings.Repeat("The user and the assistant chatted steadily about the day. ", 8)
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.HasPrefix(r.Messages[0].Content, "You summarise a conversation") {
			return llmtest.Reply{Text: summary}
		}
		return echo(r)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// turn sends text and waits for the turn's end.
func turn(b *testing.B, loop *runtime.Loop, sid, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := loop.Subscribe(ctx, sid)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	if _, err := loop.Send(ctx, sid, runtime.Input{Content: text}); err != nil {
		b.Fatal(err)
	}
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			return
		}
	}
	b.Fatal("no turn_end")
}

// retain runs retention passes until nothing is left to remove, with a
// hand-made window when the checkpoint has no window_seq key at all (one
// written before history windows).
func retain(b *testing.B, st *storage.Store, sid string) {
	floor, err := runtime.PruneFloor(st, sid)
	if err != nil {
		b.Fatal(err)
	}
	if floor == 0 {
		err := st.Update(func(tx *storage.Tx) error {
			seq, cp, err := tx.LatestCheckpoint(sid)
			if err != nil || cp == nil || seq < 4*windowTurns || bytes.Contains(cp, []byte(`"window_seq"`)) {
				return err // a checkpoint with a window of its own is left alone
			}
			window := strconv.FormatUint(seq-4*windowTurns, 10) // about 4 events a turn
			return tx.PutCheckpoint(sid, seq, append([]byte(`{"window_seq":`+window+`,`), cp[1:]...))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for {
		r, err := runtime.Retain(st, sid, runtime.RetainOptions{Mode: runtime.CompactionDiscard})
		if err != nil {
			b.Fatal(err)
		}
		if !r.More {
			return
		}
	}
}
