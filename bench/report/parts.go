package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gate is the part of bench/memgate's -json figures the table shows.
type gate struct {
	Tools       string  `json:"tools"`
	ReadyMs     float64 `json:"ready_ms"`
	IdleRSS     int64   `json:"idle_rss_bytes"`
	PeakRSS     int64   `json:"peak_rss_bytes"`
	EndAnon     int64   `json:"end_rss_anon_bytes"`
	EndFile     int64   `json:"end_rss_file_bytes"`
	Turns       int     `json:"turns"`
	TurnsPerSec float64 `json:"turns_per_second"`
	P50Ms       float64 `json:"p50_turn_ms"`
	P99Ms       float64 `json:"p99_turn_ms"`
	Failures    int     `json:"failures"`
	Budget      int64   `json:"budget_bytes"`
	Verdict     string  `json:"verdict"`
}

// memgate builds and runs bench/memgate with -json and fills its rows;
// it returns the peak RSS (0 when the gate gave no figures).
func memgate(t *table, goBin, bin string) int64 {
	dir, err := os.MkdirTemp("", "agnx-bench-gate-")
	if err != nil {
		t.row("memory gate", "failed: "+err.Error(), "")
		return 0
	}
	defer os.RemoveAll(dir)
	exe, js := filepath.Join(dir, "memgate"), filepath.Join(dir, "gate.json")
	if out, err := exec.Command(goBin, "build", "-o", exe, "./bench/memgate").CombinedOutput(); err != nil {
		t.row("memory gate", fmt.Sprintf("failed to build: %v: %s", err, out), "")
		return 0
	}
	cmd := exec.Command(exe, "-bin", bin, "-json", js)
	cmd.Stderr = os.Stderr
	runErr := cmd.Run() // exit 1 is a failed gate: its figures still come
	var g gate
	data, err := os.ReadFile(js)
	if err == nil {
		err = json.Unmarshal(data, &g)
	}
	if err != nil {
		t.row("memory gate", fmt.Sprintf("failed: %v %v", runErr, err), "")
		return 0
	}
	t.row(fmt.Sprintf("**memory gate** (`make bench-mem`, %d turns: %s): peak RSS", g.Turns, g.Tools),
		fmt.Sprintf("%s (at the end %s anonymous, %s file pages); %s", mibs(g.PeakRSS), mibs(g.EndAnon), mibs(g.EndFile),
			strings.TrimSuffix(strings.SplitN(g.Verdict, ":", 2)[0], ".")),
		fmt.Sprintf("< %s, CI-enforced; target ≤ 25 MiB", mibs(g.Budget)))
	t.row("memory gate: turns/s, p50 / p99 per turn, failed turns",
		fmt.Sprintf("%.0f /s, %.1f / %.1f ms, %d failed", g.TurnsPerSec, g.P50Ms, g.P99Ms, g.Failures), "")
	t.row("memory gate: `serve` with 100 agents defined: ready / idle RSS",
		fmt.Sprintf("%.1f ms / %s", g.ReadyMs, mibs(g.IdleRSS)), "≤ 15 ms / ≤ 15 MB")
	return g.PeakRSS
}

// sizes is the row of make cross's binaries.
func sizes(t *table, dist string) {
	targets := []struct{ name, file string }{
		{"amd64", "agnx-lite-linux-amd64"}, {"arm64", "agnx-lite-linux-arm64"}, {"armv7", "agnx-lite-linux-armv7"},
		{"armv6", "agnx-lite-linux-armv6"}, {"riscv64", "agnx-lite-linux-riscv64"},
	}
	var names, figs []string
	for _, tg := range targets {
		st, err := os.Stat(filepath.Join(dist, tg.file))
		if err != nil {
			continue
		}
		names = append(names, tg.name)
		figs = append(figs, fmt.Sprintf("%.1f", float64(st.Size())/(1<<20)))
	}
	if len(names) == 0 {
		t.row("stripped binary (`make cross`)", "not built: run make cross", "arm64 ≤ 16.5 MB")
		return
	}
	t.row("stripped binary (`make cross`): "+strings.Join(names, " / "), strings.Join(figs, " / ")+" MB", "arm64 ≤ 16.5 MB")
}

func msec(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	case d < 10*time.Second:
		return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
	}
	return d.Round(100 * time.Millisecond).String()
}

func mibs(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
