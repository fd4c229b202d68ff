// Package pages drops clean file pages from this process's page tables
// (madvise MADV_DONTNEED), so what a daemon maps from its binary and its
// database stops counting in its resident set until it is used again. The
// pages stay in the kernel's page cache: the next use is a minor fault,
// not a read from the disk. Only mappings with no write permission and no
// anonymous (copied-on-write) page qualify: everything in them is in the
// file. A range is dropped only where /proc/self/maps and
// /proc/self/smaps agree on it exactly: MADV_DONTNEED on a page that is
// not the file's, a heap page, zeroes it.
//
// It reads /proc itself, not through runtime/hostfacts and gopsutil:
// dropping needs each mapping's addresses, permissions, inode and
// anonymous pages, and gopsutil's MemoryMaps gives only a path and sizes.
// It imports the standard library only; storage does not import it: the
// caller holds the database's mapping in place (storage.Store.Mapped).
package pages

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
)

// Range is one mapping that may be dropped.
type Range struct {
	Start, End uintptr
	RSS        int64 // bytes resident when it was found
}

// Find reads /proc/self/smaps for the read-only mappings of the file at
// path (its inode: a file renamed or deleted since it was mapped is still
// found through the path of a hard link or /proc/self/exe), and keeps
// those that /proc/self/maps lists with the same bounds.
//
// The second reading is not redundant. qemu-user emulates maps for its
// guest but passes the host's smaps through, so for a 32-bit arm guest
// every smaps range is the guest's plus qemu's guest base, one page off:
// dropping it zeroed the page after the database's mapping, which held
// the Go heap, and the runtime died of it ("bad use of bucket.mp").
// Where the two disagree nothing is dropped.
func Find(path string) ([]Range, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	smaps, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer smaps.Close()
	found, err := parse(smaps, st.Ino)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	return confirmed(found, maps, st.Ino)
}

// confirmed keeps the ranges of found that maps lists, with the same
// bounds, as not-writable mappings of inode ino.
func confirmed(found []Range, maps io.Reader, ino uint64) ([]Range, error) {
	listed := map[[2]uintptr]bool{}
	sc := bufio.NewScanner(maps)
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() {
		if r := parseHeader(sc.Bytes(), ino); r != nil {
			listed[[2]uintptr{r.Start, r.End}] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := found[:0]
	for _, r := range found {
		if listed[[2]uintptr{r.Start, r.End}] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Drop drops the ranges' pages from the page tables. The caller makes sure
// each range is still the mapping Find saw (a binary's mappings are fixed
// for the process's life; a database's, while the mapping cannot change).
func Drop(rs []Range) error {
	var err error
	for _, r := range rs {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, r.Start, r.End-r.Start, syscall.MADV_DONTNEED); e != 0 {
			err = errors.Join(err, e)
		}
	}
	return err
}

// parse reads smaps and returns the mappings of the file with inode ino
// that are not writable and hold no anonymous page.
func parse(r io.Reader, ino uint64) ([]Range, error) {
	var out []Range
	var cur *Range // the mapping whose fields are being read; nil: skipped
	var anon bool
	keep := func() {
		if cur != nil && !anon {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() {
		line := sc.Bytes()
		key, val, ok := bytes.Cut(line, []byte(":"))
		if ok && len(key) > 0 && bytes.IndexByte(key, ' ') < 0 && bytes.IndexByte(key, '-') < 0 {
			if cur == nil {
				continue
			}
			switch string(key) {
			case "Rss":
				cur.RSS = kb(val)
			case "Anonymous":
				anon = kb(val) != 0
			}
			continue
		}
		keep()
		cur = parseHeader(line, ino)
	}
	keep()
	return out, sc.Err()
}

// parseHeader parses "start-end perms offset dev inode path" and returns
// the mapping when it is of inode ino and not writable.
func parseHeader(line []byte, ino uint64) *Range {
	fields := bytes.Fields(line)
	if len(fields) < 6 || len(fields[1]) < 2 || fields[1][1] == 'w' {
		return nil
	}
	if n, err := strconv.ParseUint(string(fields[4]), 10, 64); err != nil || n != ino {
		return nil
	}
	lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
	if !ok {
		return nil
	}
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || end <= start || uint64(uintptr(end)) != end {
		return nil
	}
	return &Range{Start: uintptr(start), End: uintptr(end)}
}

// kb parses smaps' "   1234 kB" into bytes.
func kb(val []byte) int64 {
	f := bytes.Fields(val)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n << 10
}
