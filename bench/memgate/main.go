// Command memgate is the memory gate: it starts the real `agnx-lite serve`
// on loopback against an in-process fake Ollama, runs the standard
// workload (100 agents defined, at most 8 loaded, 200 sessions, 4 turns
// in parallel, 2,000 turns, each making one tool call: a sandboxed bash
// call and a WASM call by turns, and every 20th turn a call of a stdio MCP
// server that 10 agents declare, started on first use and stopped when
// idle; every agent has spec.memory, and 2 turns in 20 remember a line or
// recall with a query through its search index; every agent has a
// heartbeat, the first 100 turns create schedules that post to their
// sessions every 10 s, and every 50 turns one spawns a background process
// and a webhook starts a turn; every fourth agent keeps 800 tokens of
// history, so its sessions are summarised by the model; every call goes
// into the usage ledger), samples the daemon's resident set every
// 20 ms, prints the figures and exits 1 when the peak reaches the budget
// or any turn fails.
//
//	go run ./bench/memgate -bin bin/agnx-lite [-json figures.json]
//
// Only the daemon's own process is measured: bwrap and the commands it
// runs are other processes. The MCP servers' memory is reported apart,
// read from the daemon's status.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// budget is the gate: 42 MiB. It was 50 until the memory work of issue 19
// brought the peak from 45–47 to 39–40 MiB, then 44; a smaller GC headroom
// brought it to 36–37 (38.9 in a loaded CI run before it); the line is
// that plus about a tenth for a slower or busier CI host.
const budget = 42 << 20

// options are the command line.
type options struct {
	bin, jsonOut, logFile, godebug, wasmMode, tools string
	turns, memLimitMB                               int
	smaps, mcp, memory, act                         bool
}

func main() {
	bwrap.Init() // bwrap.Probe re-runs this binary as the sandbox's init
	var o options
	flag.StringVar(&o.bin, "bin", "bin/agnx-lite", "the agnx-lite binary")
	flag.StringVar(&o.jsonOut, "json", "", "also write the figures as JSON to this file")
	flag.StringVar(&o.logFile, "log", "", "keep the daemon's log (stderr) in this file")
	flag.StringVar(&o.godebug, "godebug", "", "GODEBUG for the daemon, e.g. gctrace=1 (goes to its log)")
	flag.StringVar(&o.wasmMode, "wasm", "auto", "wasm.mode: auto, compiler or interpreter")
	flag.StringVar(&o.tools, "tools", "both", "both (bash and WASM by turns; WASM only where bwrap is unusable), bash or wasm")
	flag.IntVar(&o.turns, "turns", 2000, "turns in all")
	flag.IntVar(&o.memLimitMB, "memory-limit-mb", -1, "runtime.memory_limit_mb for the daemon; -1: its default (0 turns the guard off)")
	flag.BoolVar(&o.smaps, "smaps", false, "print the daemon's largest mappings at the end")
	flag.BoolVar(&o.memory, "memory", true, "every agent has spec.memory and some turns remember or recall with a query")
	flag.BoolVar(&o.act, "act", true, "every agent has a heartbeat and the schedule and background_process tools; "+
		"100 turns create a schedule firing every 10 s, some spawn a process, a webhook starts turns")
	flag.BoolVar(&o.mcp, "mcp", true, "some agents declare a stdio MCP server that some turns call (built with go build)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("memgate: ")
	f, err := gate(o)
	if err != nil {
		log.Fatal(err)
	}
	f.print(os.Stdout)
	if o.jsonOut != "" {
		if err := f.writeJSON(o.jsonOut); err != nil {
			log.Fatal(err)
		}
	}
	if !f.Pass {
		os.Exit(1)
	}
}

// gate sets up the data dir, runs the daemon and the workload, and
// returns the figures.
func gate(o options) (*figures, error) {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	probe := bwrap.Probe(context.Background())
	s := setup{agents: 100, wasmMode: o.wasmMode, maxConns: 256, turnLimit: 4, loaded: 8, memLimitMB: o.memLimitMB, act: o.act}
	w := workload{sessions: 200, turns: o.turns, workers: 4, bash: probe.Usable && o.tools != "wasm", wasm: o.tools != "bash",
		memory: o.memory, act: o.act, agents: s.agents}
	if !w.bash && !w.wasm {
		return nil, fmt.Errorf("-tools bash, but bwrap is unusable here: %s", probe.Problem)
	}
	home, err := os.MkdirTemp("", "agnx-memgate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	if o.mcp {
		if s.mcpServer, err = buildMCPServer(home); err != nil {
			return nil, err
		}
		w.mcp = true
	}
	if err := s.write(home); err != nil {
		return nil, fmt.Errorf("write the agents: %w", err)
	}
	logw := io.Discard
	if o.logFile != "" {
		lf, err := os.Create(o.logFile)
		if err != nil {
			return nil, err
		}
		defer lf.Close()
		logw = lf
	}
	fake := llmtest.NewServer(llmtest.Ollama, llmtest.Echo())
	defer fake.Close()
	d, err := startDaemon(bin, home, fake.BaseURL(), o.godebug, logw)
	if err != nil {
		return nil, err
	}
	f := newFigures(s, w, probe)
	f.ReadyMs = ms(d.ready)
	err = measure(d, w, s, f, fake)
	if err == nil && o.smaps {
		err = printSmaps(os.Stdout, d.pid(), 12)
	}
	if stopErr := d.stop(); err == nil && stopErr != nil {
		err = fmt.Errorf("stop the daemon: %w", stopErr)
	}
	if err != nil {
		return nil, err
	}
	f.judge()
	return f, nil
}

// measure runs the workload with the sampler on, filling in f.
func measure(d *daemon, w workload, s setup, f *figures, fake *llmtest.Server) error {
	time.Sleep(200 * time.Millisecond) // let start-up settle; nothing to signal it
	idle, err := readMem(d.pid())
	if err != nil {
		return err
	}
	f.IdleRSS = idle.RSS
	smp := startSampler(d.pid(), 20*time.Millisecond)
	var mw *mcpWatch
	if w.mcp {
		mw = startMCPWatch(d.base, 250*time.Millisecond)
	}
	c := newClient(w.workers)
	ids, err := createSessions(c, d.base, w.sessions, s.agents)
	if err != nil {
		smp.finish()
		if mw != nil {
			mw.finish()
		}
		return err
	}
	out := w.run(c, d.base, ids)
	if w.act {
		if f.Schedules, f.ScheduleRuns, err = schedRuns(c, d.base); err != nil {
			out.failures++
			out.firstErrs = append(out.firstErrs, err.Error())
		} else if f.ScheduleRuns == 0 {
			out.failures++
			out.firstErrs = append(out.firstErrs, "no schedule fired during the gate")
		}
	}
	f.CompactAgents = (s.agents + compactEvery - 2) / compactEvery
	f.Summaries = summaryCalls(fake.Requests())
	if f.Summaries == 0 {
		out.failures++
		out.firstErrs = append(out.firstErrs, "no history was summarised during the gate")
	}
	if f.LedgerCalls, f.LedgerTokens, err = ledger(c, d.base); err != nil {
		out.failures++
		out.firstErrs = append(out.firstErrs, err.Error())
	}
	if mw != nil {
		f.MCPPeakRSS, f.MCPPeakRunning, _ = mw.finish()
		f.MCPTurns = (w.turns + mcpTurnEvery - 1) / mcpTurnEvery
		f.MCPAgents = (s.agents + mcpEvery - 1) / mcpEvery
	}
	peak, last, samples, err := smp.finish()
	if err != nil {
		return err
	}
	f.PeakRSS, f.EndRSS, f.EndAnon, f.EndFile, f.Samples = peak, last.RSS, last.Anon, last.File, samples
	f.setOutcome(out)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
