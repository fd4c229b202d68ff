// Command testsum reads `go test -json` on stdin and prints what a person
// reads of `go test`: each package's ok/FAIL line, the output of every
// test that failed, build errors, and then one summary: why tests
// skipped, which failed (with how often, for a run with -count), the
// slowest tests on request, and one line with how many tests ran,
// passed, failed and skipped.
//
// usage: go test -json ./... | go run ./ci/testsum -label native [-counts FILE] [-slow N]
//
// -counts writes "ran passed failed skipped" to FILE, for ci/test.sh's
// table. It exits 1 when a test or a build failed, or when the stream
// held no test at all.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
	Elapsed     float64
}

// tally is what the stream said, in order of arrival where that matters.
type tally struct {
	passed, failed, skipped int
	buildFailed             int
	reasons                 map[string]int // skip reason → tests
	output                  map[string][]string
	skipLine                map[string]string  // test → the line saying why it skipped
	failures                map[string]int     // "pkg Test" → times it failed
	crashed                 int                // packages that failed with no test failing: a crash or a timeout
	took                    map[string]float64 // "pkg Test" (top-level) → seconds, the longest run
}

func main() {
	label := flag.String("label", "", "names the run in the summary line, e.g. arm64")
	counts := flag.String("counts", "", "write \"ran passed failed skipped\" to this file")
	slow := flag.Int("slow", 0, "list this many of the slowest top-level tests")
	flag.Parse()
	t, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	fmt.Print(t.slowest(*slow))
	fmt.Print(t.summary(*label))
	if *counts != "" {
		line := fmt.Sprintf("%d %d %d %d\n", t.passed+t.failed, t.passed, t.failed, t.skipped)
		if err := os.WriteFile(*counts, []byte(line), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	}
	if t.failed > 0 || t.buildFailed > 0 || t.crashed > 0 || t.passed+t.skipped == 0 {
		os.Exit(1)
	}
}

// read consumes the stream, writing package results and failures to out
// as they come.
func read(in io.Reader, out io.Writer) (*tally, error) {
	t := &tally{reasons: map[string]int{}, output: map[string][]string{}, skipLine: map[string]string{},
		failures: map[string]int{}, took: map[string]float64{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // not test2json: pass it on
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			t.buildFailed++
		case "output":
			if e.Test == "" {
				if pkgLine(e.Output) {
					fmt.Fprint(out, e.Output)
				} else {
					t.output[key] = append(t.output[key], e.Output)
				}
				continue
			}
			t.output[key] = append(t.output[key], e.Output)
			if s := strings.TrimSpace(e.Output); !strings.HasPrefix(s, "---") && !strings.HasPrefix(s, "===") && s != "" {
				t.skipLine[key] = s // the last line before --- SKIP says why
			}
		case "pass":
			if e.Test != "" {
				t.passed++
				t.timed(e)
			}
			delete(t.output, key)
		case "skip":
			if e.Test != "" {
				t.skipped++
				t.reasons[reason(t.skipLine[key])]++
			}
			delete(t.output, key)
		case "fail":
			if e.Test != "" {
				t.failed++
				t.failures[key]++
				t.timed(e)
			}
			if e.Test == "" && e.FailedBuild == "" && !t.hasFailure(e.Package) {
				t.crashed++
			}
			if e.Test == "" { // a timeout's panic: the tests still running say where
				for k, lines := range t.output {
					if k != key && strings.HasPrefix(k, key) {
						fmt.Fprint(out, strings.Join(lines, ""))
						delete(t.output, k)
					}
				}
			}
			fmt.Fprint(out, strings.Join(t.output[key], ""))
			delete(t.output, key)
		}
		if e.Action == "pass" || e.Action == "skip" || e.Action == "fail" {
			delete(t.skipLine, key)
		}
	}
	return t, sc.Err()
}

// pkgLine is a package's own result line: "ok  \tpkg\t1.2s", "FAIL\tpkg",
// "?   \tpkg\t[no test files]".
func pkgLine(s string) bool {
	return strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "FAIL\t") ||
		strings.HasPrefix(s, "?   \t") || s == "FAIL\n"
}

// reason cuts the file:line prefix off a t.Skip line.
func reason(line string) string {
	if i := strings.Index(line, ": "); i > 0 && strings.Contains(line[:i], ".go:") {
		line = line[i+2:]
	}
	if line == "" {
		return "(no reason given)"
	}
	return line
}

// hasFailure tells whether a test of pkg failed.
func (t *tally) hasFailure(pkg string) bool {
	for k := range t.failures {
		if strings.HasPrefix(k, pkg+" ") {
			return true
		}
	}
	return false
}

// timed keeps a top-level test's longest run.
func (t *tally) timed(e event) {
	if strings.Contains(e.Test, "/") {
		return
	}
	key := e.Package + " " + e.Test
	t.took[key] = max(t.took[key], e.Elapsed)
}

// slowest lists the n slowest top-level tests, slowest first.
func (t *tally) slowest(n int) string {
	if n <= 0 || len(t.took) == 0 {
		return ""
	}
	keys := make([]string, 0, len(t.took))
	for k := range t.took {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return t.took[keys[i]] > t.took[keys[j]] || t.took[keys[i]] == t.took[keys[j]] && keys[i] < keys[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "slowest tests:\n")
	for _, k := range keys[:min(n, len(keys))] {
		fmt.Fprintf(&b, "  %8s  %s\n", time.Duration(t.took[k]*float64(time.Second)).Round(10*time.Millisecond), k)
	}
	return b.String()
}

func (t *tally) summary(label string) string {
	var b strings.Builder
	if len(t.reasons) > 0 {
		type r struct {
			why string
			n   int
		}
		var rs []r
		for why, n := range t.reasons {
			rs = append(rs, r{why, n})
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].why < rs[j].why })
		fmt.Fprintf(&b, "skipped tests by reason:\n")
		for _, x := range rs {
			fmt.Fprintf(&b, "  %3d  %s\n", x.n, x.why)
		}
	}
	if len(t.failures) > 0 {
		keys := make([]string, 0, len(t.failures))
		for k := range t.failures {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "failed tests (package, test, times):\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s  %d×\n", k, t.failures[k])
		}
	}
	if label != "" {
		label += ": "
	}
	fmt.Fprintf(&b, "testsum: %s%d tests ran (%d passed, %d failed), %d skipped", label,
		t.passed+t.failed, t.passed, t.failed, t.skipped)
	if t.buildFailed > 0 {
		fmt.Fprintf(&b, ", %d packages did not build", t.buildFailed)
	}
	if t.crashed > 0 {
		fmt.Fprintf(&b, ", %d packages failed outside any test (a crash or a timeout: see their output)", t.crashed)
	}
	b.WriteString("\n")
	return b.String()
}
