// Package procstat reads a process's memory from /proc/PID/status, for the
// benchmark programs: one reader, not one per program.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Mem is a process's resident set now (VmRSS) and at its peak (VmHWM),
// and now's split into anonymous memory (heap, stacks, compiled WASM) and
// file pages (the binary's text, the database's mapping), in bytes.
type Mem struct {
	RSS, HWM, Anon, File int64
}

// Read reads /proc/PID/status.
func Read(pid int) (Mem, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			m.RSS = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			m.HWM = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("RssAnon:")); ok {
			m.Anon = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			m.File = kib(v)
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return m, nil
}

// kib parses "   12345 kB" into bytes.
func kib(v []byte) int64 {
	f := bytes.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n << 10
}

// MiB formats bytes as MiB with one decimal.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
