package runtime

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

func openUsageStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// putCalls writes records as the loop does, days in loc.
func putCalls(t *testing.T, st *storage.Store, loc *time.Location, recs ...UsageRecord) {
	t.Helper()
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		for i := range recs {
			if err := putUsage(tx, &recs[i], uint64(i+1), recs[i].Time.In(loc).Format(time.DateOnly)); err != nil {
				return err
			}
		}
		return nil
	}))
}

func usageCall(at time.Time, agent, model string, in, out int) UsageRecord {
	return UsageRecord{Time: at, Agent: agent, Session: "s-" + agent, Model: model, Provider: "openai",
		Usage: Usage{PromptTokens: in, CompletionTokens: out}}
}

func TestReadUsage_Groupings(t *testing.T) {
	st := openUsageStore(t)
	loc := time.FixedZone("CET", 3600)
	day1 := time.Date(2026, 11, 20, 10, 0, 0, 0, loc)
	day2 := day1.AddDate(0, 0, 1)
	putCalls(t, st, loc,
		usageCall(day1, "alice", "gpt-4o", 1000, 100),
		usageCall(day1.Add(time.Hour), "bob", "qwen3:1.7b", 500, 50),
		usageCall(day2, "alice", "gpt-4o", 2000, 200),
		usageCall(day2.Add(time.Hour), "alice", "qwen3:1.7b", 10, 1),
	)
	read := func(q UsageQuery) UsageReport {
		q.Location = loc
		rep, err := ReadUsage(st, q)
		require.NoError(t, err)
		return rep
	}
	keys := func(rep UsageReport) (out []string) {
		for _, r := range rep.Rows {
			out = append(out, r.Key)
		}
		return out
	}
	byAgent := read(UsageQuery{By: UsageByAgent})
	assert.Equal(t, []string{"alice", "bob"}, keys(byAgent))
	assert.EqualValues(t, 3311, byAgent.Rows[0].Total)
	assert.EqualValues(t, 3, byAgent.Rows[0].Calls)
	assert.EqualValues(t, 3861, byAgent.Total.Total)
	assert.Equal(t, []string{"gpt-4o", "qwen3:1.7b"}, keys(read(UsageQuery{By: UsageByModel})))
	assert.Equal(t, []string{"2026-11-20", "2026-11-21"}, keys(read(UsageQuery{By: UsageByDay})))
	total := read(UsageQuery{})
	assert.Empty(t, total.Rows)
	assert.EqualValues(t, 4, total.Total.Calls)

	onlyBob := read(UsageQuery{By: UsageByDay, Agent: "bob"})
	assert.Equal(t, []string{"2026-11-20"}, keys(onlyBob))
	assert.EqualValues(t, 550, onlyBob.Total.Total)

	// A date counts whole days; a time inside a day counts that day's
	// calls from then on, from the raw records.
	assert.EqualValues(t, 2, read(UsageQuery{Since: time.Date(2026, 11, 21, 0, 0, 0, 0, loc)}).Total.Calls)
	assert.EqualValues(t, 3, read(UsageQuery{Since: day1.Add(30 * time.Minute)}).Total.Calls)
	assert.EqualValues(t, 1, read(UsageQuery{Since: day2.Add(time.Minute)}).Total.Calls)
	assert.EqualValues(t, 0, read(UsageQuery{Since: day2.Add(2 * time.Hour)}).Total.Calls)

	_, err := ReadUsage(st, UsageQuery{By: "week"})
	assert.ErrorContains(t, err, "use agent, model or day")
}

func TestReadUsage_Cost(t *testing.T) {
	st := openUsageStore(t)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	cached := usageCall(at, "alice", "claude-sonnet-4-5", 1_000_000, 100_000)
	cached.Usage.CacheReadTokens, cached.Usage.CacheWriteTokens = 400_000, 100_000
	putCalls(t, st, time.UTC, cached, usageCall(at.Add(time.Minute), "bob", "qwen3:1.7b", 500, 50))
	prices := map[string]Price{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	rep, err := ReadUsage(st, UsageQuery{By: UsageByAgent, Location: time.UTC, Prices: prices})
	require.NoError(t, err)
	assert.True(t, rep.Priced)
	require.Len(t, rep.Rows, 2)
	// 500k uncached × 3 + 100k out × 15 + 400k × 0.3 + 100k × 3.75, per million
	require.NotNil(t, rep.Rows[0].CostUSD)
	assert.InDelta(t, 1.5+1.5+0.12+0.375, *rep.Rows[0].CostUSD, 1e-9)
	assert.False(t, rep.Rows[0].CostPartial)
	assert.Nil(t, rep.Rows[1].CostUSD, "bob's model has no price")
	require.NotNil(t, rep.Total.CostUSD)
	assert.True(t, rep.Total.CostPartial)

	rep, err = ReadUsage(st, UsageQuery{Location: time.UTC})
	require.NoError(t, err)
	assert.False(t, rep.Priced)
	assert.Nil(t, rep.Total.CostUSD)
}

// Raw records past the retention go; the rollups stay, so the totals do
// not change.
func TestPruneUsage(t *testing.T) {
	st := openUsageStore(t)
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	var recs []UsageRecord
	for i := range 10 {
		recs = append(recs, usageCall(at.Add(time.Duration(i)*time.Hour), "alice", "m", 10, 1))
	}
	putCalls(t, st, time.UTC, recs...)
	count := func() (n int) {
		require.NoError(t, st.View(func(tx *storage.Tx) error {
			return tx.IndexScan(usageScope, usageCalls, nil, func(_, _ []byte) error { n++; return nil })
		}))
		return n
	}
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		n, err := pruneUsage(tx, at.Add(5*time.Hour), 3)
		assert.Equal(t, 3, n, "a pass removes at most its limit")
		return err
	}))
	assert.Equal(t, 7, count())
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		n, err := pruneUsage(tx, at.Add(5*time.Hour), 100)
		assert.Equal(t, 2, n)
		return err
	}))
	assert.Equal(t, 5, count())
	rep, err := ReadUsage(st, UsageQuery{Location: time.UTC})
	require.NoError(t, err)
	assert.EqualValues(t, 10, rep.Total.Calls)
	// Since inside the pruned part of the day: the whole day counts.
	rep, err = ReadUsage(st, UsageQuery{Location: time.UTC, Since: at.Add(time.Hour)})
	require.NoError(t, err)
	assert.EqualValues(t, 10, rep.Total.Calls)
}

func TestUsageCodec_RoundTrip(t *testing.T) {
	rec := UsageRecord{Time: time.Unix(0, 1_790_000_000_123_456_789), Agent: "alice", Session: "01JABC", Model: "gpt-4o",
		Provider: "openai", Usage: Usage{PromptTokens: 1, CompletionTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5}}
	got, err := decodeCall(usageCallKey(rec.Time, 7, rec.Session), encodeCall(&rec))
	require.NoError(t, err)
	assert.True(t, rec.Time.Equal(got.Time))
	got.Time = rec.Time
	assert.Equal(t, rec, got)

	k, ok := parseDayKey(dayKey("2026-11-20", "a\x00b", "m", "p"))
	require.True(t, ok)
	assert.Equal(t, dayRollup{"2026-11-20", "ab", "m", "p"}, k)
}

func FuzzDecodeUsage(f *testing.F) {
	rec := usageCall(time.Unix(1_790_000_000, 0), "alice", "gpt-4o", 10, 2)
	f.Add(usageCallKey(rec.Time, 1, rec.Session), encodeCall(&rec))
	f.Add([]byte("2026-11-20\x00a\x00m\x00p"), counters{calls: 1, input: 5}.append(nil))
	f.Add([]byte{}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if r, err := decodeCall(k, v); err == nil {
			assert.GreaterOrEqual(t, r.Usage.PromptTokens, 0)
			assert.LessOrEqual(t, len(r.Agent), maxUsageName)
		}
		if c, err := decodeCounters(v); err == nil {
			assert.GreaterOrEqual(t, c.input, int64(0))
		}
		parseDayKey(k)
	})
}
