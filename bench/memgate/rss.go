package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// mem is a process's resident set now (VmRSS) and at its peak (VmHWM),
// and now's split into anonymous memory (heap, stacks, wazero's compiled
// code) and file pages (the binary's text, bbolt's mmap), in bytes.
type mem struct {
	RSS, HWM, Anon, File int64
}

// readMem reads /proc/PID/status.
func readMem(pid int) (mem, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, err
	}
	var m mem
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			m.RSS = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			m.HWM = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("RssAnon:")); ok {
			m.Anon = kib(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			m.File = kib(v)
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return m, nil
}

// kib parses "   12345 kB" into bytes.
func kib(v []byte) int64 {
	f := bytes.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n << 10
}

// sampler reads a process's memory every interval until stopped, keeping
// the largest RSS seen and the last VmHWM (the kernel's own peak, which
// catches spikes between samples).
type sampler struct {
	pid      int
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}

	mu       sync.Mutex
	maxRSS   int64
	hwm      int64
	samples  int
	lastErr  error
	lastRead mem
}

func startSampler(pid int, interval time.Duration) *sampler {
	s := &sampler{pid: pid, interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go s.run()
	return s
}

func (s *sampler) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *sampler) sample() {
	m, err := readMem(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.lastErr = err
		return
	}
	s.samples++
	s.lastRead = m
	s.maxRSS = max(s.maxRSS, m.RSS)
	s.hwm = max(s.hwm, m.HWM)
}

// finish takes a last sample, stops the sampler and returns the peak (the
// larger of the sampled maximum and VmHWM), the last reading and the
// number of samples.
func (s *sampler) finish() (peak int64, last mem, samples int, err error) {
	s.sample()
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples == 0 {
		return 0, mem{}, 0, s.lastErr
	}
	return max(s.maxRSS, s.hwm), s.lastRead, s.samples, nil
}
