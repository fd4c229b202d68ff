package main

import (
	"context"
	"fmt"
	"os/exec"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
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
	version := "?"
	if out, err := exec.Command(bin, "version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	ctx := context.Background()
	ram := "?"
	if m, err := procs.Memory(ctx); err == nil {
		ram = fmt.Sprintf("%.1f GiB", float64(m.Total)/(1<<30))
	}
	return fmt.Sprintf("%s, %d cores, %s RAM, Linux %s, %s %s/%s (%s)", procs.Model(ctx), goruntime.NumCPU(), ram,
		hostfacts.Kernel(), goVersion, goruntime.GOOS, goruntime.GOARCH, version)
}

// procs reads the daemon's memory and the machine's facts.
var procs hostfacts.Reader

// readMem reads a process's memory now.
func readMem(pid int) (hostfacts.Mem, error) { return procs.Process(pid) }
