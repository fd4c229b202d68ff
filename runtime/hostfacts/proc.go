package hostfacts

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/shirou/gopsutil/v4/process"
)

// Mem is a process's resident memory, in bytes.
type Mem struct {
	// RSS is the resident set: what the process holds in RAM now.
	RSS int64
	// Anon is its anonymous part (RssAnon): the Go heap, stacks, compiled
	// WASM. The process's own memory, which the memory guard judges.
	Anon int64
	// File is the rest: pages of files (the binary's text, the database's
	// mapping), which the kernel can take back at any time, and shared
	// memory (RssFile + RssShmem; agnx-lite maps no shared memory).
	File int64
}

// Self is this process's memory.
func (r *Reader) Self() (Mem, error) {
	r.init()
	return memOf(r.env, r.self)
}

// Process is another process's memory.
func (r *Reader) Process(pid int) (Mem, error) {
	return memOf(r.background(), &process.Process{Pid: int32(pid)})
}

// memOf reads /proc/PID/statm through gopsutil: "resident" counts the
// anonymous, file and shared-memory pages, and "shared" the file and
// shared-memory ones (the kernel's task_statm), so their difference is
// RssAnon, from the same counters /proc/PID/status prints. statm is one
// short line where status is 1.5 KB of text the kernel formats on each
// read: it is the cheaper of the two (BenchmarkSelf).
func memOf(ctx context.Context, p *process.Process) (Mem, error) {
	m, err := p.MemoryInfoExWithContext(ctx)
	if err != nil {
		return Mem{}, fmt.Errorf("cannot read the memory of process %d: agnx-lite needs Linux with /proc mounted (%w)", p.Pid, err)
	}
	return Mem{RSS: int64(m.RSS), Anon: int64(m.RSS - min(m.Shared, m.RSS)), File: int64(min(m.Shared, m.RSS))}, nil
}

// PeakRSS is a process's peak resident set (VmHWM), in bytes. A direct
// read of /proc/PID/status: gopsutil's MemoryInfo on Linux reads statm,
// which has no peak, and leaves its HWM at zero. The memory gate needs the
// kernel's own peak, which catches a spike between two samples.
func (r *Reader) PeakRSS(pid int) (int64, error) {
	path := r.proc(strconv.Itoa(pid), "status")
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	// status is under 2 KiB on current kernels: a longer file is not what
	// we expect.
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return 0, fmt.Errorf("cannot read %s: %w", path, err)
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			n, err := kBytes(v)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", path, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s has no VmHWM line", path)
}

// kBytes parses the "   123 kB" after a key into bytes.
func kBytes(v []byte) (int64, error) {
	f := bytes.Fields(v)
	if len(f) == 2 && string(f[1]) == "kB" {
		// 1<<40 kB is 1 PiB: far above any machine, and n<<10 cannot overflow.
		if n, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil && n >= 0 && n <= 1<<40 {
			return n << 10, nil
		}
	}
	v = bytes.TrimSpace(v)
	if len(v) > 40 {
		v = v[:40]
	}
	return 0, fmt.Errorf("a line reads %q where a size in kB was expected", v)
}

// maxTree bounds a walk of a Tree: a fork bomb under an MCP server must
// not make a /metrics scrape read thousands of files.
const maxTree = 4096

// Tree is the machine's processes by parent, read at one moment: every
// process's parent read once, for the memory of as many trees as needed.
type Tree struct {
	ctx      context.Context
	children map[int32][]int32
}

// bootTimeCache turns gopsutil's cache of the boot time on, once, before
// the first parent is read: gopsutil works out each process's start time
// with every read of its stat file, and without the cache reads the boot
// time again from /proc/stat each time, doubling the files a Tree reads
// (BenchmarkTree). The boot time does not change while the machine
// runs. Only this package reads processes' stat files through gopsutil,
// and each read comes after the Do that sets the switch.
var bootTimeCache sync.Once

// Tree reads every process's parent (gopsutil: /proc/PID/stat); an
// unreadable /proc gives an empty tree.
func (r *Reader) Tree() *Tree {
	bootTimeCache.Do(func() { process.EnableBootTimeCache(true) })
	t := &Tree{ctx: r.background(), children: map[int32][]int32{}}
	pids, err := process.PidsWithContext(t.ctx)
	if err != nil {
		return t
	}
	for _, pid := range pids {
		ppid, err := (&process.Process{Pid: pid}).PpidWithContext(t.ctx)
		if err != nil {
			continue // gone since the listing
		}
		if ppid > 0 {
			t.children[ppid] = append(t.children[ppid], pid)
		}
	}
	return t
}

// RSS is the resident memory of process root and all its descendants (an
// MCP server's sandbox, the server, the interpreters it starts), in bytes;
// a process gone meanwhile counts nothing.
func (t *Tree) RSS(root int) int64 {
	var total int64
	seen := map[int32]bool{}
	queue := []int32{int32(root)}
	for len(queue) > 0 && len(seen) < maxTree {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if m, err := memOf(t.ctx, &process.Process{Pid: pid}); err == nil {
			total += m.RSS
		}
		queue = append(queue, t.children[pid]...)
	}
	return total
}
