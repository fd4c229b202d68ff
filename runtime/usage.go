package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// The usage ledger lives in agnx.db's index space, scope "usage":
//
//	c/<nanos><seq><session>  one model call: big-endian Unix nanoseconds,
//	                         the big-endian seq of its assistant_response,
//	                         the session id; value: encodeCall
//	d/<day>\0<agent>\0<model>\0<provider>
//	                         the rollup of a local day ("2006-01-02"):
//	                         six uvarints (calls, input, output, cache
//	                         read, cache write, reasoning)
//
// Both are written by the group commit that stores the call's
// assistant_response, so a call is counted once, whatever crashes. Reads
// and the budget use the rollups; raw records are kept for
// UsageOptions.Retention, then pruned, a bounded number per pass.
// agnx-lite db recover (storage.Salvage) copies it with the rest of the
// index space, as far as it reads.
const (
	usageScope = "usage"
	usageCalls = "c"
	usageDays  = "d"
	// usagePruneMax bounds the raw records one prune pass removes, so that
	// the group commit that carries it stays short; what is left goes at
	// the next pass.
	usagePruneMax = 5000
	// maxUsageName bounds each name a record carries.
	maxUsageName = 255
)

// DefaultUsageRetention is how long raw usage records are kept when
// UsageOptions.Retention is 0. The daily rollups are kept for ever.
const DefaultUsageRetention = 90 * 24 * time.Hour

// UsageOptions configures the usage ledger and the daily token budget.
type UsageOptions struct {
	// Location is the time zone days are counted in (rollups, the budget's
	// midnight); nil: time.Local.
	Location *time.Location
	// DailyTokenBudget is the budget of an agent whose
	// spec.session.daily_token_budget is 0: input plus output tokens a day
	// across its sessions; 0: none.
	DailyTokenBudget int
	// Retention is how long raw records are kept; 0: DefaultUsageRetention.
	Retention time.Duration
}

func (o *UsageOptions) location() *time.Location {
	if o.Location == nil {
		return time.Local
	}
	return o.Location
}

// UsageRecord is one model call as the ledger keeps it.
type UsageRecord struct {
	Time     time.Time
	Agent    string
	Session  string
	Model    string
	Provider string
	Usage    Usage
}

// UsageObserver is an Observer that is told of every model call's usage
// once it is committed to the ledger: exactly the calls the ledger counts.
// It is called on the loop goroutine and must not block.
type UsageObserver interface {
	UsageRecorded(r UsageRecord)
}

// usageState is the loop's view of today: the day and, once something
// needed them, each agent's input plus output tokens of that day. It is
// what makes the budget check free per turn.
type usageState struct {
	day   string
	today map[string]int64 // nil until loaded from the rollups
}

// noteUsage queues the ledger write of one model call of s's agent into
// the current group commit, the one that carries the call's
// assistant_response. A zero usage writes nothing.
func (l *Loop) noteUsage(s *session, ag *LoadedAgent, u Usage) {
	u = u.clamped()
	if u == (Usage{}) {
		return
	}
	now := l.now()
	rec := UsageRecord{Time: now, Agent: s.st.Agent, Session: s.st.ID, Model: ag.Spec.Model.Name,
		Provider: usageProvider(ag), Usage: u}
	day := l.usageDay(now)
	if today := l.loadToday(); today != nil {
		today[rec.Agent] += int64(u.Total())
	}
	seq := s.st.LastSeq
	l.ops = append(l.ops, func(tx *storage.Tx) error { return putUsage(tx, &rec, seq, day) })
	if o, ok := l.opts.Observer.(UsageObserver); ok {
		l.afterCommit(func(err error) {
			if err == nil {
				o.UsageRecorded(rec)
			}
		})
	}
}

// usageProvider names the agent's provider as its spec does
// ("openrouter"), else as the provider names itself.
func usageProvider(ag *LoadedAgent) string {
	if p := ag.Spec.Model.Provider; p != "" {
		return p
	}
	return providerName(ag.Provider)
}

// maxCallTokens bounds each count of one call: a server that reports
// more is confused or hostile, and must not overflow the sums.
const maxCallTokens = 1 << 30

// clamped is u with each count within 0..maxCallTokens.
func (u Usage) clamped() Usage {
	c := func(n int) int { return min(max(n, 0), maxCallTokens) }
	return Usage{PromptTokens: c(u.PromptTokens), CompletionTokens: c(u.CompletionTokens),
		CacheReadTokens: c(u.CacheReadTokens), CacheWriteTokens: c(u.CacheWriteTokens),
		ReasoningTokens: c(u.ReasoningTokens)}
}

// usageDay returns now's local day. At a new day (and at the first call
// after start) it forgets the day's totals and queues a prune pass.
func (l *Loop) usageDay(now time.Time) string {
	day := now.In(l.opts.Usage.location()).Format(time.DateOnly)
	if day != l.usage.day {
		l.usage.day, l.usage.today = day, nil
		keep := l.opts.Usage.Retention
		if keep <= 0 {
			keep = DefaultUsageRetention
		}
		cutoff := now.Add(-keep)
		l.ops = append(l.ops, func(tx *storage.Tx) error {
			_, err := pruneUsage(tx, cutoff, usagePruneMax)
			return err
		})
	}
	return day
}

// loadToday returns each agent's tokens of the current day, read from the
// day's rollups on first need (committed ones: call it before queueing a
// write). It returns nil when they cannot be read, which it logs.
func (l *Loop) loadToday() map[string]int64 {
	if l.usage.today != nil {
		return l.usage.today
	}
	today := make(map[string]int64)
	err := l.opts.Store.View(func(tx *storage.Tx) error {
		return tx.IndexScan(usageScope, usageDays, append([]byte(l.usage.day), 0), func(k, v []byte) error {
			key, ok := parseDayKey(k)
			c, err := decodeCounters(v)
			if ok && err == nil {
				today[key.agent] += c.input + c.output
			}
			return nil
		})
	})
	if err != nil {
		l.log.Error("cannot read today's token usage: the daily token budget is not enforced", "err", err)
		return nil
	}
	l.usage.today = today
	return today
}

// putUsage writes rec's raw record and adds it to its day's rollup.
func putUsage(tx *storage.Tx, rec *UsageRecord, seq uint64, day string) error {
	key := usageCallKey(rec.Time, seq, rec.Session)
	for range 8 { // two calls at one nanosecond with one seq: a compaction's summary
		v, err := tx.IndexGet(usageScope, usageCalls, key)
		if err != nil {
			return fmt.Errorf("record usage: %w", err)
		}
		if v == nil {
			break
		}
		binary.BigEndian.PutUint64(key, binary.BigEndian.Uint64(key)+1)
	}
	if err := tx.IndexAppend(usageScope, usageCalls, key, encodeCall(rec)); err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	dk := dayKey(day, rec.Agent, rec.Model, rec.Provider)
	old, err := tx.IndexGet(usageScope, usageDays, dk)
	if err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	c, err := decodeCounters(old)
	if err != nil {
		c = counters{} // a damaged rollup starts over rather than stop every commit
	}
	c.add(rec.Usage)
	if err := tx.IndexPut(usageScope, usageDays, dk, c.append(nil)); err != nil {
		return fmt.Errorf("record usage: %w", err)
	}
	return nil
}

// pruneUsage removes at most limit raw records older than cutoff and
// returns how many it removed.
func pruneUsage(tx *storage.Tx, cutoff time.Time, limit int) (int, error) {
	var old [][]byte
	to := binary.BigEndian.AppendUint64(nil, uint64(max(cutoff.UnixNano(), 0)))
	errFull := errors.New("enough")
	err := tx.IndexRange(usageScope, usageCalls, nil, to, func(k, _ []byte) error {
		if len(old) == limit {
			return errFull
		}
		old = append(old, append([]byte(nil), k...))
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return 0, fmt.Errorf("prune usage records: %w", err)
	}
	for _, k := range old {
		if err := tx.IndexDelete(usageScope, usageCalls, k); err != nil {
			return 0, fmt.Errorf("prune usage records: %w", err)
		}
	}
	return len(old), nil
}

func usageCallKey(t time.Time, seq uint64, session string) []byte {
	k := make([]byte, 0, 16+len(session))
	k = binary.BigEndian.AppendUint64(k, uint64(max(t.UnixNano(), 0)))
	k = binary.BigEndian.AppendUint64(k, seq)
	return append(k, clipUsage(session)...)
}

func dayKey(day, agent, model, provider string) []byte {
	k := make([]byte, 0, len(day)+len(agent)+len(model)+len(provider)+3)
	k = append(append(k, day...), 0)
	k = append(append(k, clipName(agent)...), 0)
	k = append(append(k, clipName(model)...), 0)
	return append(k, clipName(provider)...)
}

// dayRollup is a rollup key taken apart.
type dayRollup struct{ day, agent, model, provider string }

func parseDayKey(k []byte) (dayRollup, bool) {
	var parts [4]string
	n := 0
	start := 0
	for i := 0; i <= len(k); i++ {
		if i == len(k) || k[i] == 0 {
			if n == len(parts) {
				return dayRollup{}, false
			}
			parts[n] = string(k[start:i])
			n++
			start = i + 1
		}
	}
	if n != len(parts) || len(parts[0]) != len(time.DateOnly) {
		return dayRollup{}, false
	}
	return dayRollup{parts[0], parts[1], parts[2], parts[3]}, true
}

// clipName cuts a name to maxUsageName bytes and drops the NUL bytes that
// separate a rollup key's parts.
func clipName(s string) string {
	return clipUsage(strings.ReplaceAll(s, "\x00", ""))
}

func clipUsage(s string) string {
	if len(s) > maxUsageName {
		return s[:maxUsageName]
	}
	return s
}
