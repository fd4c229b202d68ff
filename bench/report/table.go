package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"time"
)

// table is the report: the machine, the targets beside the Go
// floor, the long run's samples, rows of what | figure | budget, and
// notes under it.
type table struct {
	machine string
	goals   [][4]string
	long    []sample
	rows    [][3]string
	notes   []string
}

func (t *table) target(what, lite, floor, target string) {
	t.goals = append(t.goals, [4]string{what, lite, floor, target})
}

func (t *table) row(what, figure, budget string) {
	t.rows = append(t.rows, [3]string{what, figure, budget})
}

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

func (t *table) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, against an instant fake Ollama on loopback; reproduce with `make bench`.\n\n",
		time.Now().UTC().Format("2006-01-02"), t.machine)
	if len(t.goals) > 0 {
		b.WriteString("Floor and targets: the Go floor is bench/floor, a one-route net/http server built like agnx-lite.\n\n")
		b.WriteString("| figure | agnx-lite | Go floor | target |\n| --- | --- | --- | --- |\n")
		for _, r := range t.goals {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r[0]), cell(r[1]), cell(r[2]), cell(r[3]))
		}
		b.WriteString("\n")
	}
	if len(t.long) > 0 {
		fmt.Fprintf(&b, "Long run: one daemon, %d sessions, %d clients at once, sampled every %s messages.\n\n",
			sessions, clients, thousands(every))
		b.WriteString("| messages | RSS | anonymous | Go heap | db file |\n| --- | --- | --- | --- | --- |\n")
		for _, s := range t.long {
			heap := "n/a"
			if s.heap >= 0 {
				heap = mibs(s.heap)
			}
			at := thousands(s.messages)
			if s.settled {
				at += ", settled"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", at, mibs(s.mem.RSS), mibs(s.mem.Anon), heap, mibs(s.db))
		}
		b.WriteString("\n")
	}
	b.WriteString("| what | figure | budget |\n| --- | --- | --- |\n")
	for _, r := range t.rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(r[0]), cell(r[1]), cell(r[2]))
	}
	if len(t.notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.notes {
			b.WriteString(n + "\n")
		}
	}
	return b.String()
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// describeMachine is "CPU, cores, memory, kernel, Go, arch" and the
// binary's version.
func describeMachine(goBin, bin string) string {
	goVersion := goruntime.Version()
	if out, err := exec.Command(goBin, "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(out))
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	version := "?"
	if out, err := exec.Command(bin, "version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("%s, %d cores, %s RAM, Linux %s, %s %s/%s (%s)", cpuModel(), goruntime.NumCPU(), memTotal(),
		strings.TrimSpace(string(kernel)), goVersion, goruntime.GOOS, goruntime.GOARCH, version)
}

// cpuModel is the first "model name" (on ARM boards, "Model") line of
// /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	board := "unknown CPU"
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		switch k = strings.TrimSpace(k); {
		case !ok:
		case k == "model name":
			return strings.TrimSpace(v)
		case k == "Model":
			board = strings.TrimSpace(v)
		}
	}
	return board
}

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}
