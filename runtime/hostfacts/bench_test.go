package hostfacts

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shirou/gopsutil/v4/process"
)

// The memory guard reads this process's memory every 2 s: through
// gopsutil (statm) against the direct read of /proc/self/status it
// replaced (lite/procself.go until issue 35).
func BenchmarkSelf(b *testing.B) {
	var r Reader
	b.Run("gopsutil-statm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Self(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct-status", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := statusAnon("/proc/self/status"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// An MCP server's tree, on a fake /proc of 200 processes: through
// gopsutil with its boot-time cache (what Tree does), without it, and
// the direct reads of stat and statm it replaced (lite/mcp/rss.go).
func BenchmarkTree(b *testing.B) {
	root := b.TempDir()
	files := map[string]string{"stat": "cpu  1 2 3 4\nbtime 1767225600\n", "uptime": "1000.00 900.00\n"}
	for pid := 1; pid <= 200; pid++ {
		fakeProcess(files, pid, pid/2, 100, 10) // a binary tree under 1
	}
	writeFiles(b, root, files)
	r := &Reader{ProcDir: root}
	const server = 3 // and its 66 descendants
	want := r.Tree().RSS(server)
	b.Run("gopsutil", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r.Tree().RSS(server) != want {
				b.Fatal("a different sum")
			}
		}
	})
	b.Run("gopsutil-uncached", func(b *testing.B) {
		process.EnableBootTimeCache(false)
		defer process.EnableBootTimeCache(true)
		b.ReportAllocs()
		for b.Loop() {
			if r.Tree().RSS(server) != want {
				b.Fatal("a different sum")
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if directTree(root, server) != want {
				b.Fatal("a different sum")
			}
		}
	})
}

// statusAnon is the reader the memory guard had: VmRSS and RssAnon from
// a bounded read of /proc/self/status.
func statusAnon(path string) (rss, anon int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return 0, 0, err
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			rss, err = kBytes(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("RssAnon:")); ok {
			anon, err = kBytes(v)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return rss, anon, nil
}

// directTree is the tree walk lite/mcp had: every stat file once for the
// parents, then statm along the tree.
func directTree(proc string, root int) int64 {
	children := map[int][]int{}
	ents, _ := os.ReadDir(proc)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	var total int64
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		b, err := os.ReadFile(filepath.Join(proc, fmt.Sprint(pid), "statm"))
		if f := strings.Fields(string(b)); err == nil && len(f) > 1 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			total += n * int64(os.Getpagesize())
		}
		queue = append(queue, children[pid]...)
	}
	return total
}
