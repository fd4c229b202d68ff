package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// mapping is one line of /proc/PID/smaps with its resident size.
type mapping struct {
	name string
	rss  int64
}

// printSmaps writes the n mappings of pid with the most resident memory,
// mappings of the same file (or kind: [heap], anonymous) summed: where the
// memory is, without a profiler in the daemon.
func printSmaps(w io.Writer, pid, n int) error {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return err
	}
	sums := map[string]int64{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			cur = "[anonymous " + f[1] + "]"
			if len(f) >= 6 {
				cur = strings.Join(f[5:], " ") + " " + f[1]
			}
		case len(f) >= 2 && f[0] == "Rss:":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sums[cur] += n << 10
		}
	}
	var ms []mapping
	for k, v := range sums {
		ms = append(ms, mapping{k, v})
	}
	slices.SortFunc(ms, func(a, b mapping) int { return int(b.rss - a.rss) })
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	fmt.Fprintf(w, "  daemon at the end: %d threads, open files: %s\n", len(tasks), openFiles(pid))
	fmt.Fprintf(w, "  largest resident mappings (/proc/%d/smaps, by name and permissions):\n", pid)
	for _, m := range ms[:min(n, len(ms))] {
		fmt.Fprintf(w, "    %9s  %s\n", mib(m.rss), m.name)
	}
	return nil
}

// openFiles counts pid's open files by kind (socket, pipe, anon_inode,
// or the file's name).
func openFiles(pid int) string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	kinds := map[string]int{}
	for _, fd := range fds {
		target, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue
		}
		if k, _, ok := strings.Cut(target, ":"); ok && !strings.HasPrefix(target, "/") {
			target = k
		}
		kinds[target]++
	}
	keys := slices.Sorted(maps.Keys(kinds))
	slices.SortStableFunc(keys, func(a, b string) int { return kinds[b] - kinds[a] })
	parts := []string{fmt.Sprint(len(fds))}
	for _, k := range keys[:min(5, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}
