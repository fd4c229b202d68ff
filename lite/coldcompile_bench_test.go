package lite

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// BenchmarkColdCompileStall is the token latency of a streaming session
// while another agent's first use cold-compiles a 3.5 MB WASM module (the
// wc example, built with GOOS=wasip1 when wasmtools/examples/wc/wc.wasm is
// missing). A paced fake Ollama streams a token every 2 ms to a session of
// the already built assistant; a session is then created with the wc agent,
// whose build compiles the module (a fresh data dir each iteration, so the
// compile is always cold). Reported: the longest and the 99th percentile
// gap between tokens reaching a subscriber while the build runs, how long
// the build took, and for reference the same gaps over the 500 tokens
// before the build (what the machine gives with no build at all). A loop
// that builds on its own goroutine stalls every session for the whole
// compile.
func BenchmarkColdCompileStall(b *testing.B) {
	module := wcModule(b)
	const pace = 2 * time.Millisecond
	fake := newPacedOllama(pace)
	defer fake.Close()
	b.Setenv("OLLAMA_HOST", fake.URL)
	var gaps, ref []time.Duration
	var build time.Duration
	for b.Loop() {
		g, r, d := coldCompileRound(b, fake, module)
		gaps, ref = append(gaps, g...), append(ref, r...)
		build += d
	}
	if len(gaps) == 0 {
		b.Fatal("no token arrived while the agent was built")
	}
	maxGap, p99 := gapStats(gaps)
	refMax, refP99 := gapStats(ref)
	b.ReportMetric(maxGap, "max-gap-ms")
	b.ReportMetric(p99, "p99-gap-ms")
	b.ReportMetric(float64(build)/float64(time.Millisecond)/float64(b.N), "build-ms")
	b.ReportMetric(refMax, "ref-max-gap-ms")
	b.ReportMetric(refP99, "ref-p99-gap-ms")
}

// gapStats is the longest and the 99th percentile gap, in milliseconds.
func gapStats(gaps []time.Duration) (maxMs, p99Ms float64) {
	slices.Sort(gaps)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ms(gaps[len(gaps)-1]), ms(gaps[len(gaps)*99/100])
}

// coldCompileRound runs one measurement on a new data dir: the gaps
// between tokens that overlap the wc agent's build, those of the 500
// tokens before it, and the build's time.
func coldCompileRound(b *testing.B, fake *pacedOllama, module []byte) (gaps, ref []time.Duration, build time.Duration) {
	cfg := crashConfig(b.TempDir())
	_, err := config.Init(cfg)
	require.NoError(b, err)
	tool := filepath.Join(cfg.AgentsDir, "wc", "tools", "wc")
	require.NoError(b, os.MkdirAll(tool, 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(cfg.AgentsDir, "wc", "agent.yaml"),
		[]byte("apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: wc\nspec:\n  model:\n    provider: ollama\n    name: m\n"), 0o644))
	manifest, err := os.ReadFile("../wasmtools/examples/wc/tool.yaml")
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(filepath.Join(tool, "tool.yaml"), manifest, 0o644))
	require.NoError(b, os.WriteFile(filepath.Join(tool, "wc.wasm"), module, 0o644))

	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(b, err)
	defer app.Close()
	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"}) // built: cached
	require.NoError(b, err)
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(b, err)
	defer sub.Close()
	stop := fake.start()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "stream until told to stop"})
	require.NoError(b, err)

	// Token arrival times, read while the build runs.
	tokens := &tokenClock{}
	turned := make(chan struct{})
	go func() {
		defer close(turned)
		for e := range sub.C() {
			switch e.Type {
			case runtime.EvToken:
				tokens.tick()
			case runtime.EvTurnEnd:
				return
			}
		}
	}()
	const settle, refTokens = 50, 500
	<-tokens.after(settle + refTokens) // the stream runs at its pace
	start := time.Now()
	_, err = app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "wc"})
	end := time.Now()
	require.NoError(b, err)
	<-tokens.after(tokens.count() + 10) // the tokens that were held up arrive
	close(stop)
	<-turned

	times := tokens.all()
	for i := settle + 1; i < settle+refTokens; i++ {
		ref = append(ref, times[i].Sub(times[i-1]))
	}
	for i := 1; i < len(times); i++ {
		if times[i].After(start) && times[i-1].Before(end) {
			gaps = append(gaps, times[i].Sub(times[i-1]))
		}
	}
	return gaps, ref, end.Sub(start)
}

// tokenClock records when tokens arrive and tells when n have.
type tokenClock struct {
	mu    sync.Mutex
	times []time.Time
	want  int
	ready chan struct{}
}

func (c *tokenClock) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.times = append(c.times, time.Now())
	if c.ready != nil && len(c.times) >= c.want {
		close(c.ready)
		c.ready = nil
	}
}

// after is closed once n tokens have arrived.
func (c *tokenClock) after(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if len(c.times) >= n {
		close(ch)
		return ch
	}
	c.want, c.ready = n, ch
	return ch
}

func (c *tokenClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.times)
}

func (c *tokenClock) all() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.times)
}

// wcModule is the wc example's module: the one make wasm built, or one
// built now.
func wcModule(b *testing.B) []byte {
	b.Helper()
	if data, err := os.ReadFile("../wasmtools/examples/wc/wc.wasm"); err == nil {
		return data
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no Go toolchain to build the wc example: " + err.Error())
	}
	out := filepath.Join(b.TempDir(), "wc.wasm")
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", out, "../wasmtools/examples/wc")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(b, err, string(msg))
	data, err := os.ReadFile(out)
	require.NoError(b, err)
	return data
}

// pacedOllama is a fake Ollama whose /api/chat streams one token every
// pace, as a model generating at a steady rate does, until the channel
// start returned is closed; then it ends the answer.
type pacedOllama struct {
	*httptest.Server
	pace time.Duration
	mu   sync.Mutex
	stop chan struct{}
}

func newPacedOllama(pace time.Duration) *pacedOllama {
	p := &pacedOllama{pace: pace}
	p.Server = httptest.NewServer(http.HandlerFunc(p.chat))
	return p
}

// start arms the next stream; closing the returned channel ends it.
func (p *pacedOllama) start() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = make(chan struct{})
	return p.stop
}

func (p *pacedOllama) chat(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	stop := p.stop
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	fl := w.(http.Flusher)
	bw := bufio.NewWriter(w)
	created := time.Now().UTC().Format(time.RFC3339Nano)
	tick := time.NewTicker(p.pace)
	defer tick.Stop()
	n := 0
	for {
		select {
		case <-stop:
			fmt.Fprintf(bw, `{"model":"m","created_at":%q,"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":%d}`+"\n", created, n)
			bw.Flush()
			fl.Flush()
			return
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		fmt.Fprintf(bw, `{"model":"m","created_at":%q,"message":{"role":"assistant","content":"t%d "},"done":false}`+"\n", created, n)
		bw.Flush()
		fl.Flush()
		n++
	}
}
