package sched

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// fakeFirer records its firings the way lite's does: SetSession, then
// Record inside a commit of its own.
type fakeFirer struct {
	db DB
	mu sync.Mutex
	// before, when set, runs first; an error it returns is Fire's, and
	// nothing is recorded.
	before func(f Firing) error
	fired  []Firing
	active map[string]int // firings in progress per schedule
	most   int            // the most in progress for one schedule
	busy   int            // firings in progress
	peak   int            // the most in progress at once
	hold   chan struct{}  // when set, Fire waits on it before recording
}

func (f *fakeFirer) Fire(ctx context.Context, fg Firing) error {
	f.mu.Lock()
	f.active[fg.Schedule.ID]++
	f.most = max(f.most, f.active[fg.Schedule.ID])
	f.busy++
	f.peak = max(f.peak, f.busy)
	before, hold := f.before, f.hold
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.active[fg.Schedule.ID]--
		f.busy--
		f.mu.Unlock()
	}()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if before != nil {
		if err := before(fg); err != nil {
			return err
		}
	}
	fg.SetSession("sess_" + fg.Schedule.ID)
	if err := f.db.Commit(ctx, fg.Record); err != nil {
		return err
	}
	f.mu.Lock()
	f.fired = append(f.fired, fg)
	f.mu.Unlock()
	return nil
}

// setBefore sets before.
func (f *fakeFirer) setBefore(fn func(Firing) error) {
	f.mu.Lock()
	f.before = fn
	f.mu.Unlock()
}

// runs returns the runs fired so far.
func (f *fakeFirer) runs() []Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Run, len(f.fired))
	for i, fg := range f.fired {
		out[i] = fg.Run
	}
	return out
}

// syncBuffer is a log sink several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// records returns the log records with message msg.
func (b *syncBuffer) records(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range bytes.SplitSeq(b.b.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// harness is a Service over a real store in t.TempDir, with a fake
// Firer; run it inside synctest.Test.
type harness struct {
	t     *testing.T
	st    *storage.Store
	db    DB
	firer *fakeFirer
	logs  *syncBuffer
	loc   *time.Location
	// maxTurns is the services' Options.MaxTurnsPerHour.
	maxTurns int
	s        *Service
	cancel   context.CancelFunc
	done     chan error
}

func newHarness(t *testing.T, loc *time.Location) *harness {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h := &harness{t: t, st: st, db: FromStore(st), logs: &syncBuffer{}, loc: loc}
	h.firer = &fakeFirer{db: h.db, active: map[string]int{}}
	h.s = h.newService()
	return h
}

func (h *harness) newService() *Service {
	return New(Options{DB: h.db, Firer: h.firer, Location: h.loc, MaxTurnsPerHour: h.maxTurns,
		Logger: slog.New(slog.NewJSONHandler(h.logs, nil))})
}

// start runs the service until stop.
func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.s.Run(ctx) }()
	h.t.Cleanup(h.stop)
	synctest.Wait()
}

// stop stops the service (a clean shutdown or, as far as the database can
// tell, a crash: nothing is written on the way out).
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	require.NoError(h.t, <-h.done)
	h.cancel = nil
}

// restart stops the service and starts a new one on the same database.
func (h *harness) restart() {
	h.stop()
	h.s = h.newService()
	h.start()
}

// get returns schedule id and its runs.
func (h *harness) get(id string) (Schedule, []Run) {
	h.t.Helper()
	sc, runs, err := h.s.Get(context.Background(), id)
	require.NoError(h.t, err)
	return sc, runs
}

// sleep advances the fake clock by d and lets everything settle.
func sleep(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// message is a message schedule for agent "a" posting to session s1.
func message(tm Timing) Schedule {
	return Schedule{Agent: "a", Destination: Destination{SessionID: "s1"}, Timing: tm,
		Payload: Payload{Kind: KindMessage, Text: "hello"}}
}

var errBoom = errors.New("boom")
