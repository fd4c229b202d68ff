package runtime

import (
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// BenchmarkPutUsage is the ledger's share of a group commit: one raw
// record and one rollup update.
func BenchmarkPutUsage(b *testing.B) {
	st, err := storage.Open(b.TempDir()+"/agnx.db", &storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec := UsageRecord{Time: at.Add(time.Duration(i) * time.Second), Agent: "assistant", Session: "01JSESSION",
			Model: "qwen3:1.7b", Provider: "ollama", Usage: Usage{PromptTokens: 1200, CompletionTokens: 80}}
		if err := st.Update(func(tx *storage.Tx) error { return putUsage(tx, &rec, uint64(i), "2026-11-23") }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadUsage reads a year of rollups (3 agents × 2 models a day)
// by agent: what agnx-lite usage costs after a year.
func BenchmarkReadUsage(b *testing.B) {
	st, err := storage.Open(b.TempDir()+"/agnx.db", &storage.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	day := time.Date(2025, 11, 23, 10, 0, 0, 0, time.UTC)
	err = st.Update(func(tx *storage.Tx) error {
		for d := range 365 {
			for _, agent := range []string{"assistant", "coder", "news"} {
				for _, model := range []string{"qwen3:1.7b", "claude-sonnet-4-5"} {
					rec := UsageRecord{Time: day.AddDate(0, 0, d), Agent: agent, Session: "s", Model: model, Provider: "p",
						Usage: Usage{PromptTokens: 1000, CompletionTokens: 50}}
					if err := putUsage(tx, &rec, uint64(d), rec.Time.Format(time.DateOnly)); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	q := UsageQuery{By: UsageByAgent, Location: time.UTC, Prices: map[string]Price{"claude-sonnet-4-5": {Input: 3, Output: 15}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadUsage(st, q); err != nil {
			b.Fatal(err)
		}
	}
}
