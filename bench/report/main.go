// Command report is `make bench`: it measures the figures of the manual's
// performance page (docs/internals/performance.md) and prints them as
// markdown headed by the machine they were measured on, on stdout and in
// -md: first issue 19's targets beside the Go floor, then the long run's
// samples, then every figure.
// Figures are reported, never asserted (the memory gate enforces its
// budget in `make test`, not here).
//
//	go run ./bench/report -go go -bin bin/agnx-lite -emulated dist/agnx-lite-linux-arm64
//
// What it runs: the Go floor (bench/floor, built for this machine and
// linux/arm64 with make cross's flags: its ready time, idle memory and
// size); the real `serve` (cold start to ready, idle RSS, turns through
// POST /messages) and `run -m` against an in-process instant fake Ollama;
// 200 messages in one session of a fresh daemon; the long run, one fresh
// daemon with 100 sessions and 4 clients sending at once, sampled every
// 2,000 messages (RSS and anonymous from /proc, Go heap and allocated
// bytes from /metrics, the size of agnx.db); bench/memgate -json; the Go benchmarks of runtime, storage,
// wasmtools and bwrap, and lite's token latency during a cold WASM
// compile; the sizes of dist/ (make cross); and the arm64
// build's cold start and turns under qemu-aarch64-static, labelled as
// emulated: qemu's figures say nothing about a real board's.
//
// Flags that shorten it: -long N (messages of the long run, default
// 20,000; 0 stops after the first 2,000), -starts N, -no-memgate,
// -no-gobench, -emulated "" (no qemu rows).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

type options struct {
	goBin, bin, emulated, qemu, dist, md, raw string
	starts, long                              int
	skipGo, skipGate                          bool
}

func main() {
	var o options
	flag.StringVar(&o.goBin, "go", "go", "the go command (for the benchmarks and the memory gate)")
	flag.StringVar(&o.bin, "bin", "bin/agnx-lite", "the agnx-lite binary for this machine")
	flag.StringVar(&o.emulated, "emulated", "", "an arm64 build to run under -qemu (\"\": no emulated rows)")
	flag.StringVar(&o.qemu, "qemu", "qemu-aarch64-static", "the user-mode emulator for -emulated")
	flag.StringVar(&o.dist, "dist", "dist", "the release binaries of make cross, for the size row")
	flag.StringVar(&o.md, "md", "", "also write the markdown here")
	flag.StringVar(&o.raw, "raw", "", "write the raw `go test -bench` output here (for benchstat)")
	flag.IntVar(&o.starts, "starts", 5, "cold starts of serve (and of the Go floor) to take the median of")
	flag.IntVar(&o.long, "long", 20000, "messages of the long run, sampled every 2,000 (0: stop at the first 2,000)")
	flag.BoolVar(&o.skipGo, "no-gobench", false, "skip the Go benchmarks")
	flag.BoolVar(&o.skipGate, "no-memgate", false, "skip the memory gate")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	start := time.Now()
	t, err := run(o)
	if err != nil {
		log.Fatal(err)
	}
	t.note("took %v", time.Since(start).Round(time.Second))
	out := t.markdown()
	fmt.Print(out)
	if o.md != "" {
		if err := os.WriteFile(o.md, []byte(out), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// run measures everything in turn; a part that fails leaves a row that
// says so rather than losing the rest.
func run(o options) (*table, error) {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	t := &table{}
	t.machine = describeMachine(o.goBin, bin)
	fake := llmtest.NewServer(llmtest.Ollama, llmtest.Echo())
	defer fake.Close()

	d := daemonCmd{bin: bin}
	f := &figures{dist: o.dist, gateNote: "not run (-no-memgate)"}
	step("the Go floor: bench/floor")
	f.floor, f.floorErr = measureFloor(o.goBin, o.starts)
	step("serve and run -m: " + o.bin)
	f.serve = native(t, fake.BaseURL(), d, o.starts)
	step(fmt.Sprintf("%d messages in one session", oneMessages))
	f.one, f.oneSettled, f.oneAlloc, f.oneErr = oneSession(d, fake.BaseURL(), oneMessages)
	total := max(every, (o.long+every-1)/every*every)
	step(fmt.Sprintf("long run: %s messages, %d sessions, %d clients", thousands(total), sessions, clients))
	f.long, f.longErr = longRun(d, fake.BaseURL(), total)
	if !o.skipGate {
		step("memory gate")
		if f.gatePeak = memgate(t, o.goBin, bin); f.gatePeak == 0 {
			f.gateNote = "failed: see the memory gate rows"
		}
	}
	if !o.skipGo {
		var raw io.Writer = io.Discard
		if o.raw != "" {
			f, err := os.Create(o.raw)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			raw = f
		}
		goBenchmarks(t, o.goBin, raw)
	}
	sizes(t, o.dist)
	t.targets(f)
	if o.emulated != "" {
		step("arm64 under " + o.qemu)
		emulated(t, fake.BaseURL(), o)
	}
	return t, nil
}

// step says on stderr what runs now: the table comes at the end.
func step(what string) { fmt.Fprintf(os.Stderr, "bench: %s\n", what) }

// emulated runs the arm64 build's serve under qemu: cold start, turns and
// the RSS of the emulator process (guest and qemu together).
func emulated(t *table, ollama string, o options) {
	label := "**emulated** arm64 (" + o.qemu + " on this host)"
	q, err := exec.LookPath(o.qemu)
	if err != nil {
		t.row(label, "not run: "+o.qemu+" is missing (make deps installs qemu-user-static)", "")
		return
	}
	bin, err := filepath.Abs(o.emulated)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		t.row(label, "not run: "+o.emulated+" is missing (make cross builds it)", "")
		return
	}
	if out, err := exec.Command(q, "--version").Output(); err == nil {
		first, _, _ := strings.Cut(string(out), "\n")
		t.note("Emulated rows: %s (user-mode, no KVM): figures of the emulator, not of a board.", strings.TrimSpace(first))
	}
	s, err := measureServe(daemonCmd{bin: bin, prefix: []string{q}}, ollama, 3, 5)
	if err != nil {
		t.row(label, "failed: "+err.Error(), "")
		return
	}
	t.row(label+": cold start to ready of `serve`", fmt.Sprintf("%s median of %d (%s–%s)",
		msec(s.readyMedian), s.starts, msec(s.readyMin), msec(s.readyMax)), "")
	t.row(label+": one turn, POST /messages: first (loads the agent) / warm median",
		fmt.Sprintf("%s / %s", msec(s.firstTurn), msec(s.warmTurn)), "")
	t.row(label+": RSS after start (qemu and guest together)", mibs(s.idle.RSS), "")
}
