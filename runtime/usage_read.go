package runtime

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// The groupings of a usage report (UsageQuery.By).
const (
	UsageTotal   = ""
	UsageByAgent = "agent"
	UsageByModel = "model"
	UsageByDay   = "day"
)

// Price is what a model costs, in US dollars per million tokens. Input is
// the price of prompt tokens the provider's cache did not serve;
// CacheRead and CacheWrite those it read from and wrote to its cache.
// Reasoning tokens are output tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// Cost is the estimate of one call's usage, in US dollars.
func (p Price) Cost(u Usage) float64 {
	var c counters
	c.add(u.clamped())
	return p.cost(c)
}

func (p Price) cost(c counters) float64 {
	uncached := max(c.input-c.cacheRead-c.cacheWrite, 0)
	return (float64(uncached)*p.Input + float64(c.output)*p.Output +
		float64(c.cacheRead)*p.CacheRead + float64(c.cacheWrite)*p.CacheWrite) / 1e6
}

// UsageQuery says what ReadUsage reports.
type UsageQuery struct {
	// Since is where the report starts; zero: everything kept.
	Since time.Time
	// By groups the rows: UsageByAgent, UsageByModel, UsageByDay, or
	// UsageTotal for the total alone.
	By string
	// Agent keeps only this agent's usage; empty: every agent's.
	Agent string
	// Location is the time zone the ledger counts days in (the daemon's);
	// nil: time.Local.
	Location *time.Location
	// Prices by model name give cost estimates; a model without one is
	// unpriced.
	Prices map[string]Price
}

// UsageRow is one line of a usage report. Input counts whole prompts,
// their cached parts included; Reasoning is part of Output; Total is Input
// plus Output.
type UsageRow struct {
	Key        string `json:"key"`
	Calls      int64  `json:"calls"`
	Input      int64  `json:"input_tokens"`
	Output     int64  `json:"output_tokens"`
	CacheRead  int64  `json:"cache_read_tokens"`
	CacheWrite int64  `json:"cache_write_tokens"`
	Reasoning  int64  `json:"reasoning_tokens"`
	Total      int64  `json:"total_tokens"`
	// CostUSD is the estimate of the priced models' calls, nil when none
	// was priced; CostPartial says some calls of the row were not priced.
	CostUSD     *float64 `json:"cost_usd,omitempty"`
	CostPartial bool     `json:"cost_partial,omitempty"`

	unpriced bool // some calls had no price
}

// UsageReport is what ReadUsage returns: rows in order (days oldest first,
// agents and models most tokens first) and their total. Priced says some
// model had a price, so costs mean something.
type UsageReport struct {
	Since  time.Time  `json:"since,omitzero"`
	By     string     `json:"by,omitempty"`
	Agent  string     `json:"agent,omitempty"`
	Rows   []UsageRow `json:"rows"`
	Total  UsageRow   `json:"total"`
	Priced bool       `json:"priced"`
}

// ReadUsage reports the usage the ledger holds from q.Since on. It reads
// the daily rollups, and the raw records only for the part of the first
// day after Since. Once raw records are pruned, a Since inside their
// first day counts that whole day.
func ReadUsage(st *storage.Store, q UsageQuery) (UsageReport, error) {
	switch q.By {
	case UsageTotal, UsageByAgent, UsageByModel, UsageByDay:
	default:
		return UsageReport{}, fmt.Errorf("cannot group usage by %q: use agent, model or day", q.By)
	}
	r := usageReader{q: q, rows: map[string]*UsageRow{}}
	r.total.Key = "total"
	err := st.View(func(tx *storage.Tx) error {
		fromDay, err := r.firstDay(tx)
		if err != nil {
			return err
		}
		return tx.IndexScan(usageScope, usageDays, nil, func(k, v []byte) error {
			key, ok := parseDayKey(k)
			c, err := decodeCounters(v)
			if ok && err == nil && key.day >= fromDay {
				r.add(key, c)
			}
			return nil
		})
	})
	if err != nil {
		return UsageReport{}, fmt.Errorf("read usage: %w", err)
	}
	return r.report(), nil
}

// usageReader sums a report.
type usageReader struct {
	q      UsageQuery
	rows   map[string]*UsageRow
	total  UsageRow
	priced bool
}

// firstDay returns the first day whose rollups count whole. A Since after
// its day's midnight reads that day's raw records from Since on, when
// they are all still kept (the oldest kept is not after Since).
func (r *usageReader) firstDay(tx *storage.Tx) (string, error) {
	if r.q.Since.IsZero() {
		return "", nil
	}
	loc := cmp.Or(r.q.Location, time.Local)
	since := r.q.Since.In(loc)
	y, m, d := since.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	day := midnight.Format(time.DateOnly)
	if since.Equal(midnight) {
		return day, nil
	}
	oldest, err := oldestCall(tx)
	if err != nil || oldest.IsZero() || oldest.After(since) {
		return day, err
	}
	next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	from := binary.BigEndian.AppendUint64(nil, uint64(max(since.UnixNano(), 0)))
	to := binary.BigEndian.AppendUint64(nil, uint64(max(next.UnixNano(), 0)))
	err = tx.IndexRange(usageScope, usageCalls, from, to, func(k, v []byte) error {
		rec, err := decodeCall(k, v)
		if err == nil {
			var c counters
			c.add(rec.Usage)
			r.add(dayRollup{day: day, agent: rec.Agent, model: rec.Model, provider: rec.Provider}, c)
		}
		return nil
	})
	return next.Format(time.DateOnly), err
}

// errFirstKey stops a scan at its first key.
var errFirstKey = errors.New("first key read")

func oldestCall(tx *storage.Tx) (time.Time, error) {
	var t time.Time
	err := tx.IndexScan(usageScope, usageCalls, nil, func(k, _ []byte) error {
		if len(k) >= 8 {
			t = time.Unix(0, int64(binary.BigEndian.Uint64(k)))
		}
		return errFirstKey
	})
	if errors.Is(err, errFirstKey) {
		err = nil
	}
	return t, err
}

func (r *usageReader) add(k dayRollup, c counters) {
	if r.q.Agent != "" && k.agent != r.q.Agent {
		return
	}
	price, ok := r.q.Prices[k.model]
	r.priced = r.priced || ok
	addRow(&r.total, c, price, ok)
	if r.q.By == UsageTotal {
		return
	}
	key := k.day
	switch r.q.By {
	case UsageByAgent:
		key = k.agent
	case UsageByModel:
		key = k.model
	}
	row := r.rows[key]
	if row == nil {
		row = &UsageRow{Key: key}
		r.rows[key] = row
	}
	addRow(row, c, price, ok)
}

func addRow(row *UsageRow, c counters, p Price, priced bool) {
	row.Calls += c.calls
	row.Input += c.input
	row.Output += c.output
	row.CacheRead += c.cacheRead
	row.CacheWrite += c.cacheWrite
	row.Reasoning += c.reasoning
	row.Total = row.Input + row.Output
	if !priced {
		row.unpriced = row.unpriced || c.calls > 0
		return
	}
	if row.CostUSD == nil {
		row.CostUSD = new(float64)
	}
	*row.CostUSD += p.cost(c)
}

func (r *usageReader) report() UsageReport {
	rep := UsageReport{Since: r.q.Since, By: r.q.By, Agent: r.q.Agent, Rows: []UsageRow{}, Total: r.total, Priced: r.priced}
	rows := make([]*UsageRow, 0, len(r.rows))
	for _, row := range r.rows {
		rows = append(rows, row)
	}
	// Pointers: a sort of a struct type would instantiate the generic
	// sort again for its shape (kilobytes of binary).
	slices.SortFunc(rows, func(a, b *UsageRow) int {
		if r.q.By == UsageByDay {
			return cmp.Compare(a.Key, b.Key)
		}
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Key, b.Key))
	})
	for _, row := range rows {
		rep.Rows = append(rep.Rows, *row)
	}
	settle(&rep.Total)
	for i := range rep.Rows {
		settle(&rep.Rows[i])
	}
	return rep
}

// settle turns a summed row's private flag into CostPartial, so that
// rows compare by their public fields alone.
func settle(row *UsageRow) {
	row.CostPartial = row.CostUSD != nil && row.unpriced
	row.unpriced = false
}
