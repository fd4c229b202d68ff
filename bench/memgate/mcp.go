package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// The MCP workload: every mcpEvery-th agent declares a stdio MCP server
// (mcpserver, built here with the Go SDK), and every mcpTurnEvery-th turn,
// which lands on one of those agents, calls its echo tool. Servers start
// on their first call, stop after mcpIdleSeconds, and die with their
// agent's eviction, so the run sees cold starts, cached tool lists and
// stops. They are other processes: the gate's budget is agnx-lite's own.
const (
	mcpEvery       = 10
	mcpTurnEvery   = 20 // a multiple of mcpEvery: turn k is on agent k mod 100
	mcpIdleSeconds = 3
)

var mcpCall = call{`use gate__echo {"text":"hi"}`, "gate__echo said: echo: hi"}

// mcpAgent reports whether agent i declares the MCP server.
func mcpAgent(i int) bool { return i%mcpEvery == 0 }

// buildMCPServer builds bench/memgate/mcpserver into dir, without cgo as
// agnx-lite is built.
func buildMCPServer(dir string) (string, error) {
	out := filepath.Join(dir, "mcpserver")
	cmd := exec.Command("go", "build", "-o", out, "github.com/agnx-lite/agnx-lite/bench/memgate/mcpserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the MCP server (go build ./bench/memgate/mcpserver): %v: %s", err, msg)
	}
	return out, nil
}

// mcpTool is the spec.tools entry of an MCP agent.
func mcpTool(server string) string {
	return fmt.Sprintf("    - {type: mcp, name: gate, command: %q}\n", server)
}

// mcpWatch polls the daemon's status for its MCP servers: the peak of
// their summed RSS and of how many ran at once.
type mcpWatch struct {
	stop, done chan struct{}

	mu      sync.Mutex
	peakRSS int64
	peakRun int
	polls   int
}

func startMCPWatch(base string, every time.Duration) *mcpWatch {
	w := &mcpWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		c := &http.Client{Timeout: 2 * time.Second}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			w.poll(c, base)
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *mcpWatch) poll(c *http.Client, base string) {
	resp, err := c.Get(base + "/api/admin/v1/status")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var st struct {
		Servers []struct {
			State string `json:"state"`
			RSS   int64  `json:"rss_bytes"`
		} `json:"mcp_servers"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return
	}
	var sum int64
	run := 0
	for _, s := range st.Servers {
		if s.State == "running" {
			sum += s.RSS
			run++
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	w.peakRSS, w.peakRun = max(w.peakRSS, sum), max(w.peakRun, run)
}

// finish stops the polling and returns the peaks.
func (w *mcpWatch) finish() (peakRSS int64, peakRunning, polls int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peakRSS, w.peakRun, w.polls
}
