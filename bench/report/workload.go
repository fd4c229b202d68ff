package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// The workload: 100 sessions, 4 clients sending at once, sampled
// every 2,000 messages.
const (
	sessions = 100
	clients  = 4
	every    = 2000
)

// sample is the daemon after some messages: its memory from /proc, its Go
// heap and cumulative allocations from /metrics (-1: not exported) and
// the size of its database file.
type sample struct {
	messages    int
	settled     bool // taken a settle time after the last message
	mem         hostfacts.Mem
	heap, alloc int64
	db          int64
}

// daemonAt starts serve on a fresh data dir made by init; the caller
// stops it and removes home.
func daemonAt(d daemonCmd, ollama string) (s *served, home string, err error) {
	home, env, err := initHome(d, ollama, "load")
	if err != nil {
		return nil, "", err
	}
	if s, err = startServe(d, env); err != nil {
		os.RemoveAll(home)
		return nil, "", err
	}
	return s, home, nil
}

// oneSession sends n messages to one session of a fresh daemon and reads
// its memory right after the last and once settled, and what the n turns
// allocated (the Go heap's bytes per turn; -1 when the build does not say).
func oneSession(d daemonCmd, ollama string, n int) (after, settled hostfacts.Mem, allocPerTurn int64, err error) {
	allocPerTurn = -1
	s, home, err := daemonAt(d, ollama)
	if err != nil {
		return after, settled, allocPerTurn, err
	}
	defer os.RemoveAll(home)
	db := filepath.Join(home, "agnx.db")
	err = func() error {
		sid, err := s.session()
		if err != nil {
			return err
		}
		before, err := s.sample(0, db)
		if err != nil {
			return err
		}
		for i := range n {
			if _, err := s.turn(sid, "hello "+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		end, err := s.sample(n, db)
		if err != nil {
			return err
		}
		if before.alloc >= 0 && end.alloc >= 0 {
			allocPerTurn = (end.alloc - before.alloc) / int64(n)
		}
		after = end.mem
		time.Sleep(settle) // quiet: nothing signals what the guard did
		settled, err = readMem(s.cmd.Process.Pid)
		return err
	}()
	if stopErr := s.stop(); err == nil {
		err = stopErr
	}
	return after, settled, allocPerTurn, err
}

// longRun sends total messages (a multiple of every, at least one every)
// from 4 clients round-robin over 100 sessions of one fresh daemon and
// samples it once the sessions exist and after each every messages. Client c owns sessions c, c+4, …
// so no two turns of one session ever overlap.
func longRun(d daemonCmd, ollama string, total int) ([]sample, error) {
	s, home, err := daemonAt(d, ollama)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	samples, err := func() ([]sample, error) {
		ids := make([]string, sessions)
		for i := range ids {
			var err error
			if ids[i], err = s.session(); err != nil {
				return nil, err
			}
		}
		first, err := s.sample(0, filepath.Join(home, "agnx.db"))
		if err != nil {
			return nil, err
		}
		samples := []sample{first}
		next := make([]int, clients) // each client's position in its round-robin
		for sent := 0; sent < total; sent += every {
			errs := make([]error, clients)
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					for range every / clients {
						sid := ids[c+clients*(next[c]%(sessions/clients))]
						next[c]++
						if _, err := s.turn(sid, fmt.Sprintf("msg %d.%d", c, next[c])); err != nil {
							errs[c] = err
							return
						}
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return samples, err
				}
			}
			sm, err := s.sample(sent+every, filepath.Join(home, "agnx.db"))
			if err != nil {
				return samples, err
			}
			samples = append(samples, sm)
		}
		time.Sleep(settle) // quiet: nothing signals what the guard did
		sm, err := s.sample(total, filepath.Join(home, "agnx.db"))
		if err != nil {
			return samples, err
		}
		sm.settled = true
		return append(samples, sm), nil
	}()
	if stopErr := s.stop(); err == nil {
		err = stopErr
	}
	return samples, err
}

func (s *served) sample(messages int, db string) (sample, error) {
	sm := sample{messages: messages, heap: -1, alloc: -1}
	var err error
	if sm.mem, err = readMem(s.cmd.Process.Pid); err != nil {
		return sm, err
	}
	st, err := os.Stat(db)
	if err != nil {
		return sm, err
	}
	sm.db = st.Size()
	resp, err := httpc.Get(s.base + "/metrics")
	if err != nil {
		return sm, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return sm, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sm.heap, sm.alloc, err = readMetrics(resp.Body)
	return sm, err
}

// readMetrics finds agnx_go_heap_bytes and agnx_go_alloc_bytes_total in
// Prometheus text; -1 for one that is not there.
func readMetrics(r io.Reader) (heap, alloc int64, err error) {
	heap, alloc = -1, -1
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch name {
		case "agnx_go_heap_bytes":
			heap = int64(f)
		case "agnx_go_alloc_bytes_total":
			alloc = int64(f)
		}
	}
	return heap, alloc, sc.Err()
}
