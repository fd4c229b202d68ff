package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/agnx-lite/agnx-lite/bwrap"
)

// figures are what the gate measured; the JSON form feeds `make bench`'s
// report (bench/report), whose figures docs/internals/performance.md gives.
type figures struct {
	Agents      int     `json:"agents"`
	MaxLoaded   int     `json:"max_loaded_agents"`
	Sessions    int     `json:"sessions"`
	Parallel    int     `json:"parallel_turns"`
	Turns       int     `json:"turns"`
	Tools       string  `json:"tools"`
	Sandbox     string  `json:"sandbox"`
	WasmMode    string  `json:"wasm_mode"`
	ReadyMs     float64 `json:"ready_ms"`
	IdleRSS     int64   `json:"idle_rss_bytes"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	EndRSS      int64   `json:"end_rss_bytes"`
	EndAnon     int64   `json:"end_rss_anon_bytes"`
	EndFile     int64   `json:"end_rss_file_bytes"`
	Samples     int     `json:"samples"`
	TurnsPerSec float64 `json:"turns_per_second"`
	P50Ms       float64 `json:"p50_turn_ms"`
	P99Ms       float64 `json:"p99_turn_ms"`
	// The MCP workload: the servers are other processes, so their memory
	// is reported apart from the daemon's (PeakRSS, which the gate judges).
	MCPAgents      int   `json:"mcp_agents,omitempty"`
	MCPTurns       int   `json:"mcp_turns,omitempty"`
	MCPPeakRSS     int64 `json:"mcp_servers_peak_rss_bytes,omitempty"`
	MCPPeakRunning int   `json:"mcp_servers_peak_running,omitempty"`
	// The acting workload: the schedules the turns made and their runs.
	Schedules    int `json:"schedules,omitempty"`
	ScheduleRuns int `json:"schedule_runs,omitempty"`
	// The compaction and usage workload.
	CompactAgents int      `json:"compact_agents"`
	Summaries     int      `json:"summaries"`
	LedgerCalls   int64    `json:"ledger_calls"`
	LedgerTokens  int64    `json:"ledger_tokens"`
	Failures      int      `json:"failures"`
	FirstFailures []string `json:"first_failures,omitempty"`
	Budget        int64    `json:"budget_bytes"`
	Pass          bool     `json:"pass"`
	Verdict       string   `json:"verdict"`
	GoVersion     string   `json:"go_version"`
	GOARCH        string   `json:"goarch"`
	CPU           string   `json:"cpu"`
	Cores         int      `json:"cores"`
}

func newFigures(s setup, w workload, probe bwrap.Status) *figures {
	f := &figures{
		Agents: s.agents, MaxLoaded: s.loaded, Sessions: w.sessions, Parallel: w.workers, Turns: w.turns,
		WasmMode: s.wasmMode, Budget: budget, GoVersion: goruntime.Version(), GOARCH: goruntime.GOARCH,
		CPU: procs.Model(context.Background()), Cores: goruntime.NumCPU(),
	}
	switch {
	case w.bash && w.wasm:
		f.Tools = "bash (sandboxed) and echo (WASM), by turns"
	case w.bash:
		f.Tools = "bash (sandboxed) only (-tools bash)"
	case probe.Usable:
		f.Tools = "echo (WASM) only (-tools wasm)"
	default:
		f.Tools = "echo (WASM) only: bwrap is unusable here"
	}
	f.Sandbox = "bwrap (" + probe.Version + ")"
	if !probe.Usable {
		f.Sandbox = "none: " + probe.Problem
	}
	return f
}

func (f *figures) setOutcome(o outcome) {
	f.Failures, f.FirstFailures = o.failures, o.firstErrs
	if o.wall > 0 {
		f.TurnsPerSec = float64(len(o.latencies)) / o.wall.Seconds()
	}
	f.P50Ms, f.P99Ms = ms(percentile(o.latencies, 0.50)), ms(percentile(o.latencies, 0.99))
}

// judge sets the verdict: the peak must stay under the budget and every
// turn must succeed.
func (f *figures) judge() {
	switch {
	case f.PeakRSS >= f.Budget:
		f.Verdict = fmt.Sprintf("FAIL: the daemon's peak RSS was %s, at or over the %s budget.", mib(f.PeakRSS), mib(f.Budget))
	case f.Failures > 0:
		f.Verdict = fmt.Sprintf("FAIL: %d of %d turns failed (peak RSS %s, under the %s budget).",
			f.Failures, f.Turns, mib(f.PeakRSS), mib(f.Budget))
	default:
		f.Pass = true
		f.Verdict = fmt.Sprintf("PASS: the daemon's peak RSS was %s, under the %s budget.", mib(f.PeakRSS), mib(f.Budget))
	}
}

func (f *figures) print(w io.Writer) {
	fmt.Fprintf(w, "memory gate: %d agents defined (at most %d loaded), %d sessions, %d turns, %d in parallel\n",
		f.Agents, f.MaxLoaded, f.Sessions, f.Turns, f.Parallel)
	fmt.Fprintf(w, "  tools:      %s\n", f.Tools)
	fmt.Fprintf(w, "  sandbox:    %s; wasm.mode %s\n", f.Sandbox, f.WasmMode)
	fmt.Fprintf(w, "  machine:    %s, %d cores, %s, %s\n", f.CPU, f.Cores, f.GOARCH, f.GoVersion)
	fmt.Fprintf(w, "  ready:      %.1f ms\n", f.ReadyMs)
	fmt.Fprintf(w, "  idle RSS:   %s (after start, before the first turn)\n", mib(f.IdleRSS))
	fmt.Fprintf(w, "  peak RSS:   %s (max of VmHWM and %d samples at 20 ms)\n", mib(f.PeakRSS), f.Samples)
	fmt.Fprintf(w, "  end RSS:    %s (anonymous %s, file pages %s)\n", mib(f.EndRSS), mib(f.EndAnon), mib(f.EndFile))
	if f.MCPTurns > 0 {
		fmt.Fprintf(w, "  mcp:        %d agents declare a stdio MCP server (Go SDK), %d turns call it; at most %d ran at once, "+
			"together %s RSS at peak (their own processes: not in agnx-lite's peak above)\n",
			f.MCPAgents, f.MCPTurns, f.MCPPeakRunning, mib(f.MCPPeakRSS))
	}
	if f.Schedules > 0 {
		fmt.Fprintf(w, "  acting:     a heartbeat per agent, %d schedules firing every 10 s (%d runs), "+
			"a background process and a webhook turn spawning a subagent every %d turns\n", f.Schedules, f.ScheduleRuns, actTurnEvery)
	}
	fmt.Fprintf(w, "  compaction: %d agents keep %d tokens of history: %d summaries written; the usage ledger holds %d calls, %d tokens\n",
		f.CompactAgents, compactBudget, f.Summaries, f.LedgerCalls, f.LedgerTokens)
	fmt.Fprintf(w, "  turns:      %.0f/s, p50 %.2f ms, p99 %.2f ms, %d failed\n", f.TurnsPerSec, f.P50Ms, f.P99Ms, f.Failures)
	for _, e := range f.FirstFailures {
		fmt.Fprintf(w, "    %s\n", strings.TrimSpace(e))
	}
	fmt.Fprintf(w, "  budget:     %s = %d bytes\n", mib(f.Budget), f.Budget)
	fmt.Fprintln(w, f.Verdict)
}

func (f *figures) writeJSON(path string) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
