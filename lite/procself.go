package lite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

// procMaxRead bounds a read of /proc/PID/status or /proc/meminfo: both are
// under 2 KiB on current kernels, so a longer file is not what we expect.
const procMaxRead = 64 << 10

// selfMem is this process's resident set (VmRSS) and its anonymous part
// (RssAnon: Go heap, stacks, compiled WASM; the rest is file pages such as
// the binary's text), in bytes, from /proc/self/status.
func selfMem() (rss, anon int64, err error) {
	return procMem("/proc/self/status")
}

// pidRSS is another process's resident set in bytes, from
// /proc/PID/status.
func pidRSS(pid int) (int64, error) {
	rss, _, err := procMem("/proc/" + strconv.Itoa(pid) + "/status")
	return rss, err
}

func procMem(path string) (rss, anon int64, err error) {
	data, err := readProc(path)
	if err != nil {
		return 0, 0, err
	}
	rss, anon, err = parseKBPair(data, "VmRSS:", "RssAnon:")
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return rss, anon, nil
}

// hostMem is the machine's memory (MemTotal) and how much of it can be had
// without swapping (MemAvailable, which counts reclaimable cache), in
// bytes, from /proc/meminfo.
func hostMem() (total, avail int64, err error) {
	data, err := readProc("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	total, avail, err = parseKBPair(data, "MemTotal:", "MemAvailable:")
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/meminfo: %w", err)
	}
	return total, avail, nil
}

func readProc(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: agnx-lite needs Linux with /proc mounted (%w)", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, procMaxRead))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: agnx-lite needs Linux with /proc mounted (%w)", path, err)
	}
	return data, nil
}

// parseKBPair finds the lines "a   123 kB" and "b   456 kB" of a /proc
// status-style file and gives their values in bytes. A missing line, or
// one that is not a count of kB, is an error.
func parseKBPair(data []byte, a, b string) (va, vb int64, err error) {
	foundA, foundB := false, false
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var dst *int64
		var rest []byte
		if r, ok := bytes.CutPrefix(line, []byte(a)); ok && !foundA {
			dst, rest, foundA = &va, r, true
		} else if r, ok := bytes.CutPrefix(line, []byte(b)); ok && !foundB {
			dst, rest, foundB = &vb, r, true
		} else {
			continue
		}
		if *dst, err = kBytes(rest); err != nil {
			return 0, 0, err
		}
	}
	switch {
	case !foundA:
		return 0, 0, fmt.Errorf("no %s line: agnx-lite needs Linux 4.5 or later", a[:len(a)-1])
	case !foundB:
		return 0, 0, fmt.Errorf("no %s line: agnx-lite needs Linux 4.5 or later", b[:len(b)-1])
	}
	return va, vb, nil
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
	return 0, fmt.Errorf("a line reads %q where a size in kB was expected: report it with your kernel version", v)
}
