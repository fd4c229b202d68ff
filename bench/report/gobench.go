package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// results are parsed `go test -bench` lines: name (GOMAXPROCS suffix
// cut) → unit → value.
type results map[string]map[string]float64

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads the Benchmark lines of `go test -bench` output.
func parseBench(out []byte, into results) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		into[procsSuffix.ReplaceAllString(f[0], "")] = m
	}
}

// get is a value, or -1 when the benchmark did not run (skipped).
func (r results) get(name, unit string) float64 {
	if m, ok := r[name]; ok {
		if v, ok := m[unit]; ok {
			return v
		}
	}
	return -1
}

// goBenchmarks runs the packages' benchmarks and fills their rows.
func goBenchmarks(t *table, goBin string, raw io.Writer) {
	runs := []struct{ pkg, pattern, benchtime string }{
		{"./runtime/", "BenchmarkLoop_Turn|BenchmarkRecovery10k", ""},
		{"./storage/", "BenchmarkAppend|BenchmarkRecovery10k", ""},
		{"./wasmtools/", "BenchmarkRun|BenchmarkCompile", ""},
		{"./bwrap/", "BenchmarkRun", ""},
		{"./runtime/memory/", "BenchmarkRecall10k", ""},
		{"./lite/mcp/", "BenchmarkMCPCall|BenchmarkMCPColdStart", ""},
		{"./lite/httpapi/", "BenchmarkPostMessage", ""},
		// Each round cold-compiles a 3.5 MB module: seconds, not a loop.
		{"./lite/", "BenchmarkColdCompileStall", "3x"},
	}
	r := map[string]results{}
	for _, run := range runs {
		step("go test -bench " + run.pattern + " " + run.pkg)
		args := []string{"test", "-run", "^$", "-bench", run.pattern, "-benchmem"}
		if run.benchtime != "" {
			args = append(args, "-benchtime", run.benchtime)
		}
		cmd := exec.Command(goBin, append(args, run.pkg)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		raw.Write(out)
		r[run.pkg] = results{}
		if err != nil {
			t.row("benchmarks of "+run.pkg, fmt.Sprintf("failed: %v", err), "")
		}
		parseBench(out, r[run.pkg])
	}
	rt, st, wt, bw, li := r["./runtime/"], r["./storage/"], r["./wasmtools/"], r["./bwrap/"], r["./lite/"]
	mem, mc, api := r["./runtime/memory/"], r["./lite/mcp/"], r["./lite/httpapi/"]
	t.row("runtime overhead per turn, model excluded (BenchmarkLoop_Turn: 3 events, 2 commits): fsync / no fsync / no fsync + Ollama client over loopback",
		join(dur(rt.get("BenchmarkLoop_Turn/fsync", "ns/op")), dur(rt.get("BenchmarkLoop_Turn/nosync", "ns/op")),
			dur(rt.get("BenchmarkLoop_Turn/nosync-http", "ns/op")))+
			fmt.Sprintf(" (%s allocs without fsync)", count(rt.get("BenchmarkLoop_Turn/nosync", "allocs/op"))),
		"≤ 1 ms + one fsync")
	t.row("POST /messages through HTTP and the loop (BenchmarkPostMessage: one client, a new session every 16 messages, no fsync): instant in-process model / fake Ollama",
		join(count(api.get("BenchmarkPostMessage/in-process", "msgs/s")), count(api.get("BenchmarkPostMessage/ollama-loopback", "msgs/s")))+" per second", "")
	t.row("event append, group commit with fsync: 1 / 16 / 128 events per commit, per event",
		join(dur(st.get("BenchmarkAppend/fsync/batch=1", "ns/event")), dur(st.get("BenchmarkAppend/fsync/batch=16", "ns/event")),
			dur(st.get("BenchmarkAppend/fsync/batch=128", "ns/event"))), "")
	t.row("event append without fsync (CPU only): 1 / 16 / 128 per commit, per event",
		join(dur(st.get("BenchmarkAppend/nosync/batch=1", "ns/event")), dur(st.get("BenchmarkAppend/nosync/batch=16", "ns/event")),
			dur(st.get("BenchmarkAppend/nosync/batch=128", "ns/event"))), "")
	t.row("recovery of a 10,000-event session: storage view / storage open+view / runtime (checkpoint + tail)",
		join(dur(st.get("BenchmarkRecovery10k/view", "ns/op")), dur(st.get("BenchmarkRecovery10k/open", "ns/op")),
			dur(rt.get("BenchmarkRecovery10k", "ns/op"))), "")
	t.row("WASM tool call, trivial module: compiler / interpreter",
		join(dur(wt.get("BenchmarkRun/compiler/tiny", "ns/op")), dur(wt.get("BenchmarkRun/interpreter/tiny", "ns/op"))), "")
	t.row("WASM tool call, Go-built `calc`: compiler / interpreter",
		join(dur(wt.get("BenchmarkRun/compiler/go", "ns/op")), dur(wt.get("BenchmarkRun/interpreter/go", "ns/op"))), "")
	t.row("compile `calc`: compiler cold / interpreter cold / compiler from the disk cache",
		join(dur(wt.get("BenchmarkCompile/compiler/cold", "ns/op")), dur(wt.get("BenchmarkCompile/interpreter/cold", "ns/op")),
			dur(wt.get("BenchmarkCompile/compiler/cached", "ns/op"))), "")
	cc := func(unit string) string { return dur(li.get("BenchmarkColdCompileStall", unit) * 1e6) }
	t.row("gap between tokens of a streaming session while another agent cold-compiles `wc` (3.5 MB WASM): max / p99 (build took; with no build: max / p99)",
		join(cc("max-gap-ms"), cc("p99-gap-ms"))+" ("+cc("build-ms")+"; "+join(cc("ref-max-gap-ms"), cc("ref-p99-gap-ms"))+")",
		"as with no build: the loop never builds")
	t.row("memory recall with a query over 10,000 entries (the check that nothing changed, then the ranking): keyword / hybrid (768-dim vectors)",
		join(dur(mem.get("BenchmarkRecall10k/keyword", "ns/op")), dur(mem.get("BenchmarkRecall10k/hybrid", "ns/op"))), "")
	t.row("MCP tool call: through the manager in process / the SDK alone / a stdio server (no sandbox); cold start of a stdio server (spawn, initialize, list)",
		join(dur(mc.get("BenchmarkMCPCall/inprocess", "ns/op")), dur(mc.get("BenchmarkMCPCall/inprocess-sdk-alone", "ns/op")),
			dur(mc.get("BenchmarkMCPCall/stdio", "ns/op")))+"; "+dur(mc.get("BenchmarkMCPColdStart", "ns/op")), "")
	t.row("one sandboxed `true`: bwrap / trust mode / bare exec",
		join(dur(bw.get("BenchmarkRun/bwrap", "ns/op")), dur(bw.get("BenchmarkRun/trust", "ns/op")),
			dur(bw.get("BenchmarkRun/exec", "ns/op"))), "")
}

func join(parts ...string) string { return strings.Join(parts, " / ") }

// dur formats nanoseconds; "skipped" for a benchmark that did not run.
func dur(ns float64) string {
	switch {
	case ns < 0:
		return "skipped"
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.3g s", ns/1e9)
}

func count(v float64) string {
	if v < 0 {
		return "?"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
