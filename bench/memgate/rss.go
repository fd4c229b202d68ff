package main

import (
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// mem is a process's memory now and its peak resident set (VmHWM).
type mem struct {
	hostfacts.Mem
	HWM int64
}

// procs reads the daemon's memory and the machine's facts.
var procs hostfacts.Reader

func readMem(pid int) (mem, error) {
	m, err := procs.Process(pid)
	if err != nil {
		return mem{}, err
	}
	hwm, err := procs.PeakRSS(pid)
	return mem{Mem: m, HWM: hwm}, err
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
