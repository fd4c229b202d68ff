package bwrap

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// maxProcScan bounds the walk over /proc that finds a sandbox's processes.
const maxProcScan = 1 << 16

// Interrupt sends sig to the command and everything it started, but not
// to bwrap: a command may then end cleanly (SIGTERM) or stop what it is
// doing (SIGINT), where Signal would end bwrap and, with it, the whole
// sandbox at once. In trust mode it is Signal (the command's group).
//
// Inside a sandbox, the processes are those below bwrap's own init (the
// process tree Pid → bwrap's pid 1 → the command), found through /proc
// at the moment of the call: one started just after is missed.
func (p *Process) Interrupt(sig syscall.Signal) {
	if p.trust {
		p.Signal(sig)
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	for _, pid := range descendants(p.Pid, 2) {
		_ = syscall.Kill(pid, sig)
	}
}

// descendants returns the processes at least minDepth levels below root
// (1: its children).
func descendants(root, minDepth int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for i, e := range ents {
		if i >= maxProcScan {
			break
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := parentOf(pid); ok {
			kids[pp] = append(kids[pp], pid)
		}
	}
	var out []int
	level := []int{root}
	for depth := 1; len(level) > 0 && depth < 64; depth++ {
		var next []int
		for _, pid := range level {
			next = append(next, kids[pid]...)
		}
		if depth >= minDepth {
			out = append(out, next...)
		}
		level = next
	}
	return out
}

// parentOf reads a process's parent pid from /proc/<pid>/stat, whose
// second field (the command name) may hold spaces and parentheses: the
// fields after it start past the last ')'.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(string(f[1]))
	return pp, err == nil
}
