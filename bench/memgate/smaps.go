package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// mapping is a file's (or a kind's) resident memory.
type mapping struct {
	name string
	rss  int64
}

// printSmaps writes the n mappings of pid with the most resident memory,
// mappings of the same file (or kind: [heap], anonymous) and permissions
// summed: where the memory is, without a profiler in the daemon.
func printSmaps(w io.Writer, pid, n int) error {
	maps, err := procs.Mappings(pid)
	if err != nil {
		return err
	}
	sums := map[string]int64{}
	for _, m := range maps {
		name := "[anonymous " + m.Perms + "]"
		if m.Name != "" {
			name = m.Name + " " + m.Perms
		}
		sums[name] += m.RSS
	}
	var ms []mapping
	for k, v := range sums {
		ms = append(ms, mapping{k, v})
	}
	slices.SortFunc(ms, func(a, b mapping) int { return int(b.rss - a.rss) })
	threads, _ := procs.Threads(pid)
	fmt.Fprintf(w, "  daemon at the end: %d threads, open files: %s\n", threads, openFiles(pid))
	fmt.Fprintf(w, "  largest resident mappings (/proc/%d/smaps, by name and permissions):\n", pid)
	for _, m := range ms[:min(n, len(ms))] {
		fmt.Fprintf(w, "    %9s  %s\n", mib(m.rss), m.name)
	}
	return nil
}

// openFiles counts pid's open files by kind (socket, pipe, anon_inode,
// or the file's name).
func openFiles(pid int) string {
	files, _ := procs.OpenFiles(pid)
	kinds := map[string]int{}
	for _, target := range files {
		if k, _, ok := strings.Cut(target, ":"); ok && !strings.HasPrefix(target, "/") {
			target = k
		}
		kinds[target]++
	}
	keys := slices.Sorted(maps.Keys(kinds))
	slices.SortStableFunc(keys, func(a, b string) int { return kinds[b] - kinds[a] })
	parts := []string{fmt.Sprint(len(files))}
	for _, k := range keys[:min(5, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}
