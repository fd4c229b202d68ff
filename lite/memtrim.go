package lite

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// Most of a daemon's resident set is not its own memory but pages of its
// binary: a start and each turn fault in code and tables a few pages at a
// time, and the kernel maps whole large folios of the page cache at each
// fault, so 13–14 MB of a 17 MB binary stay mapped (RssFile) although a
// turn uses a fraction of them. Those pages are clean and stay in the page
// cache; dropping them from our page tables (madvise MADV_DONTNEED) costs
// only a minor fault when a page is next used. The memory guard drops them
// at every check, and returns the Go heap's free pages to the kernel after
// a quiet spell.

// exePages are this process's read-only mappings of its own executable,
// found once: their addresses are fixed for the life of the process, so no
// other mapping can be in their place when madvise runs, and a mapping with
// no write permission and no anonymous (copied-on-write) page holds nothing
// that is not in the file. No other mapping (the database's, which bbolt
// may remap at any moment; the heap) is ever touched.
type exePages struct {
	once   sync.Once
	ranges []mapping
	err    error
}

// drop unmaps the executable's pages from our page tables.
func (p *exePages) drop() error {
	p.once.Do(func() { p.ranges, p.err = findExeMappings() })
	if p.err != nil {
		return p.err
	}
	var err error
	for _, m := range p.ranges {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); e != 0 {
			err = errors.Join(err, e)
		}
	}
	return err
}

// findExeMappings reads /proc/self/smaps for the executable's read-only
// mappings.
func findExeMappings() ([]mapping, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return exeMappings(f, st.Ino)
}

// mapping is one line of smaps that dropExePages may advise.
type mapping struct {
	start, end uintptr
	rss        int64 // bytes resident
}

// exeMappings reads smaps and returns the mappings of the file with inode
// ino that are not writable and hold no anonymous page.
func exeMappings(f io.Reader, ino uint64) ([]mapping, error) {
	var out []mapping
	var cur *mapping // the mapping whose fields are being read, nil: skipped
	var anon bool
	keep := func() {
		if cur != nil && !anon {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Bytes()
		key, val, ok := bytes.Cut(line, []byte(":"))
		if ok && len(key) > 0 && bytes.IndexByte(key, ' ') < 0 && bytes.IndexByte(key, '-') < 0 {
			if cur == nil {
				continue
			}
			switch string(key) {
			case "Rss":
				cur.rss = kb(val)
			case "Anonymous":
				anon = kb(val) != 0
			}
			continue
		}
		keep()
		cur = parseMapsLine(line, ino)
	}
	keep()
	return out, sc.Err()
}

// parseMapsLine parses "start-end perms offset dev inode path" and returns
// the mapping when it is of inode ino and not writable.
func parseMapsLine(line []byte, ino uint64) *mapping {
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
	if err1 != nil || err2 != nil || end <= start {
		return nil
	}
	return &mapping{start: uintptr(start), end: uintptr(end)}
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
