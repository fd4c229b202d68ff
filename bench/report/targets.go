package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// figures are what the targets table (issue 19's) is made of; a nil or
// empty part was not measured, and its error (if any) says why.
type figures struct {
	floor      *floorFigures
	floorErr   error
	serve      *serveFigures
	one        hostfacts.Mem // after oneMessages in one session
	oneSettled hostfacts.Mem // and settled
	oneAlloc   int64         // heap bytes allocated per turn there; -1: not known
	oneErr     error
	long       []sample // at 0, 2,000, 4,000, … messages
	longErr    error
	gatePeak   int64 // 0: not run
	gateNote   string
	dist       string
}

const oneMessages = 200

// targets fills the table headed "Floor and targets" and the long run's
// own table from f.
func (t *table) targets(f *figures) {
	floorCell := func(s string) string {
		if f.floor == nil {
			return "failed: " + errText(f.floorErr)
		}
		return s
	}
	var fl floorFigures
	if f.floor != nil {
		fl = *f.floor
	}
	idle, ready := "failed", "failed"
	if f.serve != nil {
		idle, ready = withAnon(f.serve.idle), msec(f.serve.readyMedian)+fmt.Sprintf(" median of %d", f.serve.starts)
	}
	t.target("idle VmRSS (after start)", idle, floorCell(withAnon(fl.idle)),
		fmt.Sprintf("≤ %s (1.5× floor), anonymous ≤ 1.5 MiB", floorTarget(f.floor, func(fl *floorFigures) string {
			return mibs(fl.idle.RSS * 3 / 2)
		})))
	t.target("ready (exec → /readyz)", ready, floorCell(msec(fl.readyMedian)),
		fmt.Sprintf("≤ floor + 3 ms = %s", floorTarget(f.floor, func(fl *floorFigures) string {
			return msec(fl.readyMedian + 3e6)
		})))
	one := "failed: " + errText(f.oneErr)
	if f.oneErr == nil {
		one = withAnon(f.one) + "; settled " + withAnon(f.oneSettled)
	}
	t.target(fmt.Sprintf("after %d messages, one session", oneMessages), one, "—", "≤ 12 MiB")
	at2k, delta, allocs := "failed: "+errText(f.longErr), "failed: "+errText(f.longErr), "n/a"
	if s, ok := at(f.long, every); ok {
		at2k = withAnon(s.mem)
	}
	last := len(f.long) - 1
	var settled *sample
	if last > 0 && f.long[last].settled {
		settled = &f.long[last]
		last--
	}
	if s, ok := at(f.long, every); ok && last >= 0 && f.long[last].messages > every {
		e := f.long[last]
		delta = fmt.Sprintf("%+.1f MiB RSS (%+.1f anonymous), db %.1f → %.1f MiB", mib(e.mem.RSS-s.mem.RSS),
			mib(e.mem.Anon-s.mem.Anon), mib(s.db), mib(e.db))
		if settled != nil {
			delta += fmt.Sprintf("; settled %s", withAnon(settled.mem))
		}
		allocs = perTurn(s, e)
	} else if f.longErr == nil {
		delta = "not run (-long 0)"
		if s0, ok := at(f.long, 0); ok && len(f.long) > 1 {
			allocs = perTurn(s0, f.long[1]) + " (first 2,000, -long 0)"
		}
	}
	t.target(fmt.Sprintf("%s messages / %d sessions / %d clients", thousands(every), sessions, clients), at2k, "—", "≤ 16 MiB")
	if len(f.long) > 0 {
		delta = fmt.Sprintf("2,000 → %s: %s", thousands(f.long[last].messages), delta)
	}
	if f.longErr != nil && len(f.long) > 0 {
		delta += "; stopped: " + f.longErr.Error()
	}
	t.target("2,000 → 20,000 messages", delta, "—", "flat: ≤ +1 MiB, database file bounded")
	gate := f.gateNote
	if f.gatePeak > 0 {
		gate = mibs(f.gatePeak)
	}
	t.target("memory gate peak (standard workload)", gate, "—", "≤ 25 MiB")
	one = "failed: " + errText(f.oneErr)
	if f.oneErr == nil {
		one = "n/a (no agnx_go_alloc_bytes_total in this build)"
		if f.oneAlloc >= 0 {
			one = fmt.Sprintf("%.0f KB (%d messages, one session)", float64(f.oneAlloc)/1000, oneMessages)
		}
	}
	t.target("allocations per turn (agnx_go_alloc_bytes_total)", one+"; long run: "+allocs, "—", "≤ 50 KB")
	arm := "not built: run make cross"
	if st, err := os.Stat(filepath.Join(f.dist, "agnx-lite-linux-arm64")); err == nil {
		arm = mibs(st.Size())
	}
	t.target("stripped binary linux/arm64", arm, floorCell(mibs(fl.arm64Size)), "≤ 11.5 MiB")
	t.long = f.long
}

// perTurn is the Go heap allocated per message between two samples.
func perTurn(a, b sample) string {
	if a.alloc < 0 || b.alloc < 0 {
		return "n/a (no agnx_go_alloc_bytes_total in this build)"
	}
	return fmt.Sprintf("%.0f KB (%s → %s messages)", float64(b.alloc-a.alloc)/float64(b.messages-a.messages)/1000,
		thousands(a.messages), thousands(b.messages))
}

func at(ss []sample, messages int) (sample, bool) {
	for _, s := range ss {
		if s.messages == messages {
			return s, true
		}
	}
	return sample{}, false
}

func floorTarget(fl *floorFigures, f func(*floorFigures) string) string {
	if fl == nil {
		return "? (the floor failed)"
	}
	return f(fl)
}

func withAnon(m hostfacts.Mem) string {
	return fmt.Sprintf("%s (%.1f anonymous)", mibs(m.RSS), mib(m.Anon))
}

func errText(err error) string {
	if err == nil {
		return "not run"
	}
	return err.Error()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// thousands is n with a comma every three digits (20,000).
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
