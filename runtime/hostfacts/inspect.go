package hostfacts

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/shirou/gopsutil/v4/process"
)

// What a process holds, for the memory gate's report of the daemon at
// the end of a run: where its memory is, its threads and open files.

// Mapping is one mapping of a process with its resident size.
type Mapping struct {
	// Name is the mapped file's path, a kind ("[heap]", "[stack]"), or ""
	// for an anonymous mapping.
	Name string
	// Perms are its permissions as smaps prints them ("r-xp").
	Perms string
	RSS   int64 // bytes
}

// Mappings reads /proc/PID/smaps directly: gopsutil's MemoryMaps gives a
// mapping's path and sizes but not its permissions, and the binary's code
// (r-xp) and its read-only data (r--p) are the two figures the report
// tells apart.
func (r *Reader) Mappings(pid int) ([]Mapping, error) {
	data, err := os.ReadFile(r.proc(strconv.Itoa(pid), "smaps"))
	if err != nil {
		return nil, err
	}
	return parseSmaps(data), nil
}

// parseSmaps reads smaps' headers ("start-end perms offset dev inode
// [name]") and their Rss lines; anything else is skipped.
func parseSmaps(data []byte) []Mapping {
	var out []Mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		switch {
		case len(f) >= 5 && bytes.IndexByte(f[0], '-') > 0 && bytes.IndexByte(f[0], ':') < 0:
			m := Mapping{Perms: string(f[1])}
			if len(f) >= 6 {
				m.Name = string(bytes.Join(f[5:], []byte(" ")))
			}
			out = append(out, m)
		case len(f) >= 2 && string(f[0]) == "Rss:" && len(out) > 0:
			if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil && n >= 0 && n <= 1<<40 {
				out[len(out)-1].RSS = n << 10
			}
		}
	}
	return out
}

// Threads is how many threads a process runs (gopsutil: /proc/PID/status).
func (r *Reader) Threads(pid int) (int, error) {
	n, err := (&process.Process{Pid: int32(pid)}).NumThreadsWithContext(r.background())
	if err != nil {
		return 0, fmt.Errorf("cannot read the threads of process %d: %w", pid, err)
	}
	return int(n), nil
}

// OpenFiles are what a process's descriptors point at: a file's path, or
// "socket:[123]", "pipe:[456]", "anon_inode:[eventpoll]" (gopsutil:
// /proc/PID/fd).
func (r *Reader) OpenFiles(pid int) ([]string, error) {
	fs, err := (&process.Process{Pid: int32(pid)}).OpenFilesWithContext(r.background())
	if err != nil {
		return nil, fmt.Errorf("cannot read the open files of process %d: %w", pid, err)
	}
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out, nil
}
