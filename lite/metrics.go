package lite

import (
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// metrics counts what the loop does (it is the loop's runtime.Observer)
// and writes it, with gauges read at scrape time, in the Prometheus text
// format. Label sets are small (agents, tools, providers, outcomes), so
// plain maps under one mutex do.
type metrics struct {
	mu       sync.Mutex
	turns    map[[2]string]uint64 // agent, outcome
	turnSec  map[string]float64   // agent
	tools    map[[3]string]uint64 // kind, tool, outcome
	toolSec  map[string]float64   // kind
	calls    map[[2]string]uint64 // provider, outcome
	latency  map[string]*histogram
	tokens   map[[2]string]uint64  // agent, prompt|completion|cache_read|cache_write|reasoning
	cost     map[[2]string]float64 // agent, model: USD, priced models only
	prices   map[string]runtime.Price
	lastPoll func() time.Time // the Telegram gateway's, when it runs
}

var (
	_ runtime.Observer      = (*metrics)(nil)
	_ runtime.UsageObserver = (*metrics)(nil)
)

// newMetrics counts with the config's prices (nil: no cost counter).
func newMetrics(prices map[string]runtime.Price) *metrics {
	return &metrics{turns: map[[2]string]uint64{}, turnSec: map[string]float64{}, tools: map[[3]string]uint64{},
		toolSec: map[string]float64{}, calls: map[[2]string]uint64{}, latency: map[string]*histogram{},
		tokens: map[[2]string]uint64{}, cost: map[[2]string]float64{}, prices: prices}
}

func (m *metrics) TurnEnded(agent, outcome string, d time.Duration, _ runtime.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turns[[2]string{agent, outcome}]++
	m.turnSec[agent] += d.Seconds()
}

// UsageRecorded counts one model call's tokens once it is in the usage
// ledger, so /metrics and agnx-lite usage agree (compaction summaries
// included). Models come from agents' specs: the labels stay few.
func (m *metrics) UsageRecorded(r runtime.UsageRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := r.Usage
	m.tokens[[2]string{r.Agent, "prompt"}] += uint64(u.PromptTokens)
	m.tokens[[2]string{r.Agent, "completion"}] += uint64(u.CompletionTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		m.tokens[[2]string{r.Agent, "cache_read"}] += uint64(u.CacheReadTokens)
		m.tokens[[2]string{r.Agent, "cache_write"}] += uint64(u.CacheWriteTokens)
	}
	if u.ReasoningTokens > 0 {
		m.tokens[[2]string{r.Agent, "reasoning"}] += uint64(u.ReasoningTokens)
	}
	if p, ok := m.prices[r.Model]; ok {
		m.cost[[2]string{r.Agent, r.Model}] += p.Cost(u)
	}
}

func (m *metrics) ToolCalled(agent, tool, kind string, ok bool, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools[[3]string{kind, tool, outcome(ok)}]++
	m.toolSec[kind] += d.Seconds()
}

func (m *metrics) ModelCalled(agent, provider string, d time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[[2]string{provider, outcome(err == nil)}]++
	h := m.latency[provider]
	if h == nil {
		h = &histogram{}
		m.latency[provider] = h
	}
	h.observe(d.Seconds())
}

func outcome(ok bool) string {
	if ok {
		return "ok"
	}
	return "error"
}

// histogram has fixed buckets for model latency, from a fast local model's
// first call to a slow Pi's long answer.
type histogram struct {
	counts [len(latencyBuckets) + 1]uint64
	sum    float64
}

var latencyBuckets = [...]float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(latencyBuckets) && v > latencyBuckets[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
}

// write renders everything; gauges come from the app at this moment.
func (m *metrics) write(w io.Writer, app *App) {
	p := &promWriter{w: w}
	m.mu.Lock()
	p.family("agnx_turns_total", "counter", "Turns ended, by agent and outcome.")
	for _, k := range sortedKeys(m.turns) {
		p.sample("agnx_turns_total", float64(m.turns[k]), "agent", k[0], "outcome", k[1])
	}
	p.family("agnx_turn_seconds_total", "counter", "Time spent in turns, model time included.")
	for _, k := range sortedKeys(m.turnSec) {
		p.sample("agnx_turn_seconds_total", m.turnSec[k], "agent", k)
	}
	p.family("agnx_tool_calls_total", "counter", "Tool calls, by kind, tool and outcome.")
	for _, k := range sortedKeys(m.tools) {
		p.sample("agnx_tool_calls_total", float64(m.tools[k]), "kind", k[0], "tool", k[1], "outcome", k[2])
	}
	p.family("agnx_tool_seconds_total", "counter", "Time spent in tool calls, by kind.")
	for _, k := range sortedKeys(m.toolSec) {
		p.sample("agnx_tool_seconds_total", m.toolSec[k], "kind", k)
	}
	p.family("agnx_model_calls_total", "counter", "Model calls, by provider and outcome.")
	for _, k := range sortedKeys(m.calls) {
		p.sample("agnx_model_calls_total", float64(m.calls[k]), "provider", k[0], "outcome", k[1])
	}
	p.family("agnx_model_call_seconds", "histogram", "Model call latency, by provider.")
	for _, prov := range sortedKeys(m.latency) {
		p.histogram("agnx_model_call_seconds", m.latency[prov], "provider", prov)
	}
	p.family("agnx_tokens_total", "counter", "Tokens used, by agent and kind (prompt, completion; cache_read and cache_write are the parts of prompt the provider's prompt cache served and stored, reasoning the part of completion spent thinking).")
	for _, k := range sortedKeys(m.tokens) {
		p.sample("agnx_tokens_total", float64(m.tokens[k]), "agent", k[0], "kind", k[1])
	}
	if len(m.prices) > 0 {
		p.family("agnx_model_cost_usd_total", "counter", "Estimated cost of model calls in US dollars, by agent and model, from the prices in agnx.yaml.")
		for _, k := range sortedKeys(m.cost) {
			p.sample("agnx_model_cost_usd_total", m.cost[k], "agent", k[0], "model", k[1])
		}
	}
	lastPoll := m.lastPoll
	m.mu.Unlock()
	m.gauges(p, app, lastPoll)
}

func (m *metrics) gauges(p *promWriter, app *App, lastPoll func() time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if st, err := app.Loop.Stats(ctx); err == nil {
		p.gauge("agnx_sessions_resident", "Sessions in memory.", float64(st.Resident))
		p.gauge("agnx_turns_running", "Turns running.", float64(st.Running))
		p.gauge("agnx_turns_waiting", "Turns waiting for the turn limit.", float64(st.Waiting))
		p.gauge("agnx_turns_parked", "Turns waiting for a person's decision: they hold no turn slot.", float64(st.Parked))
		p.gauge("agnx_loop_queue_depth", "Requests waiting in the event loop's inbox.", float64(st.Inbox))
	}
	p.gauge("agnx_agents_loaded", "Agents built and cached.", float64(app.Agents.Loaded()))
	writeAgents(p, app.Agents.Counts())
	p.gauge("agnx_tools_stuck", "Tool calls given up on past their deadline whose goroutine has not returned yet.",
		float64(app.Loop.StuckTools()))
	if m, err := app.host.Self(); err == nil {
		p.gauge("agnx_resident_memory_bytes", "Resident set size of the process.", float64(m.RSS))
		p.gauge("agnx_anonymous_memory_bytes", "Resident anonymous memory of the process (its own: the Go heap, stacks, compiled WASM), which the memory guard judges.", float64(m.Anon))
	}
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	p.gauge("agnx_go_heap_bytes", "Go heap in use.", float64(ms.HeapInuse))
	p.family("agnx_go_alloc_bytes_total", "counter", "Bytes the Go heap has allocated since start (freed ones included).")
	p.sample("agnx_go_alloc_bytes_total", float64(ms.TotalAlloc))
	p.gauge("agnx_goroutines", "Goroutines.", float64(goruntime.NumGoroutine()))
	writeHost(p, app.host.Read(ctx, app.Config.DataDir))
	writeMCP(p, app.Agents.Tools().MCP().Stats())
	writeSched(p, app)
	writeRetention(p, app.retain, app.Store)
	if lastPoll != nil {
		if t := lastPoll(); !t.IsZero() {
			p.gauge("agnx_telegram_last_poll_timestamp_seconds", "When the Telegram gateway last polled successfully.", float64(t.Unix()))
		}
	}
}

func sortedKeys[K interface {
	~string | ~[2]string | ~[3]string
}, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// sort.Slice: a generic sort would be copied for each key shape.
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	return keys
}

// promWriter writes the Prometheus text exposition format.
type promWriter struct{ w io.Writer }

func (p *promWriter) family(name, typ, help string) {
	fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (p *promWriter) gauge(name, help string, v float64) {
	p.family(name, "gauge", help)
	p.sample(name, v)
}

func (p *promWriter) sample(name string, v float64, labels ...string) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(escapeLabel(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	fmt.Fprintf(p.w, "%s %s\n", b.String(), strconv.FormatFloat(v, 'g', -1, 64))
}

func (p *promWriter) histogram(name string, h *histogram, labels ...string) {
	var cum uint64
	for i, le := range latencyBuckets {
		cum += h.counts[i]
		p.sample(name+"_bucket", float64(cum), append(labels[:len(labels):len(labels)], "le", strconv.FormatFloat(le, 'g', -1, 64))...)
	}
	cum += h.counts[len(latencyBuckets)]
	p.sample(name+"_bucket", float64(cum), append(labels[:len(labels):len(labels)], "le", "+Inf")...)
	p.sample(name+"_sum", h.sum, labels...)
	p.sample(name+"_count", float64(cum), labels...)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}
