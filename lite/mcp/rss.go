package mcp

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// procTree is the host's processes by parent, read once from /proc for
// one Stats.
type procTree struct {
	children map[int][]int
}

// readProcTree reads every process's parent; an unreadable /proc gives
// an empty tree.
func readProcTree() *procTree {
	t := &procTree{children: map[int][]int{}}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return t
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid := parentOf(stat); ppid > 0 {
			t.children[ppid] = append(t.children[ppid], pid)
		}
	}
	return t
}

// parentOf is the parent pid in a /proc/PID/stat line (the field after
// the state, after the command name's closing parenthesis).
func parentOf(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// rss is the resident memory of root and all its descendants, bytes.
func (t *procTree) rss(root int) int64 {
	var total int64
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 && len(seen) < 4096 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		total += vmRSS(pid)
		queue = append(queue, t.children[pid]...)
	}
	return total
}

// vmRSS is one process's resident memory, from /proc/PID/statm.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
