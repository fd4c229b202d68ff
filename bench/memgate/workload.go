package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// workload is the standard memory-gate workload.
type workload struct {
	sessions int
	turns    int
	workers  int
	bash     bool // turns call bash (sandboxed)
	wasm     bool // turns call echo (WASM); with bash, by turns
	mcp      bool // every mcpTurnEvery-th turn calls the MCP server
	memory   bool // two turns in every memTurnEvery use the memory tool
	act      bool // schedules, background processes and webhooks (act.go)
	agents   int  // session i is on agent i mod agents
}

// call is a turn's message and the start of the answer it must get.
type call struct {
	message, want string
}

var (
	bashCall = call{`use bash {"command":"echo hi"}`, "bash said: hi"}
	echoCall = call{`use echo {"x":1}`, `echo said: {"x":1}`}
)

// callFor picks turn k's tool: bash and echo by turns when both are on.
func (w workload) callFor(k int) call {
	if c, ok := actCallFor(k); ok && w.act {
		return c
	}
	if w.mcp && k%mcpTurnEvery == 0 {
		return mcpCall
	}
	if c, ok := memoryCallFor(k); ok && w.memory {
		return c
	}
	if w.bash && (!w.wasm || k%2 == 0) {
		return bashCall
	}
	return echoCall
}

// outcome is what the turns did.
type outcome struct {
	wall      time.Duration
	latencies []time.Duration // sorted
	failures  int
	firstErrs []string // the first few failures, for the report
}

// client talks to the daemon with as many kept-alive connections as there
// are workers.
func newClient(workers int) *http.Client {
	return &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers + 2},
	}
}

// createSessions makes n sessions, session i on agent i mod agents.
func createSessions(c *http.Client, base string, n, agents int) ([]string, error) {
	ids := make([]string, n)
	for i := range ids {
		body := fmt.Sprintf(`{"agent":%q}`, agentName(i%agents))
		data, status, err := post(c, base+"/api/v1/sessions", body)
		if err != nil || status >= 300 {
			return nil, fmt.Errorf("create session %d: status %d %v: %s", i, status, err, data)
		}
		var s struct {
			ID string `json:"session_id"`
		}
		if err := json.Unmarshal(data, &s); err != nil || s.ID == "" {
			return nil, fmt.Errorf("create session %d: no session_id in %s", i, data)
		}
		ids[i] = s.ID
	}
	return ids, nil
}

// run plays the turns: turn k goes to session k mod len(ids), so the
// turns in flight at once are on different sessions (and agents, which
// cycle through the LRU).
func (w workload) run(c *http.Client, base string, ids []string) outcome {
	next := make(chan int)
	var mu sync.Mutex
	out := outcome{latencies: make([]time.Duration, 0, w.turns)}
	var wg sync.WaitGroup
	start := time.Now()
	for range w.workers {
		wg.Go(func() {
			for k := range next {
				t0 := time.Now()
				var err error
				if k%oaTurnEvery == 12 {
					err = oaTurn(c, base, agentName(k%len(ids)%w.agents), k, w.callFor(k))
				} else {
					err = w.turn(c, base, ids[k%len(ids)], w.callFor(k))
				}
				if err == nil && w.act && k%actTurnEvery == 35 {
					err = postHook(c, base, k)
				}
				if err == nil && k%webEvery == 60 {
					err = webLoad(c, base)
				}
				d := time.Since(t0)
				mu.Lock()
				out.latencies = append(out.latencies, d)
				if err != nil {
					out.failures++
					if len(out.firstErrs) < 5 {
						out.firstErrs = append(out.firstErrs, fmt.Sprintf("turn %d: %v", k, err))
					}
				}
				mu.Unlock()
			}
		})
	}
	for k := range w.turns {
		next <- k
	}
	close(next)
	wg.Wait()
	out.wall = time.Since(start)
	slices.Sort(out.latencies)
	return out
}

// turn sends one message and checks the answer: 200, completed, and the
// fake model's report of the tool's result.
func (w workload) turn(c *http.Client, base, id string, cl call) error {
	body, _ := json.Marshal(map[string]string{"content": cl.message})
	data, status, err := post(c, base+"/api/v1/sessions/"+id+"/messages", string(body))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %s", status, clip(bytes.TrimSpace(data)))
	}
	var r struct {
		Status  string `json:"status"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("bad answer %s: %v", clip(data), err)
	}
	if r.Status != "completed" || !strings.HasPrefix(r.Content, cl.want) {
		return fmt.Errorf("status %q, content %q; want completed, %q", r.Status, clip([]byte(r.Content)), cl.want)
	}
	return nil
}

func post(c *http.Client, url, body string) ([]byte, int, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return data, resp.StatusCode, err
}

// getJSON decodes the JSON answer of a GET that must answer 200.
func getJSON(c *http.Client, url string, v any) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
