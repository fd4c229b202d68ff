package upkeep

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// fakeLoop is the loop as the guard sees it: Shed drops its resident
// sessions and sets whether it refuses new turns.
type fakeLoop struct {
	mu      sync.Mutex
	stats   runtime.Stats
	refuses bool
}

func (l *fakeLoop) Stats(context.Context) (runtime.Stats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats, nil
}

func (l *fakeLoop) Shed(_ context.Context, busy bool) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.stats.Resident
	l.stats.Resident, l.refuses = 0, busy
	return n, nil
}

func (l *fakeLoop) refusing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refuses
}

func (l *fakeLoop) resident() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats.Resident
}

// turn counts a turn begun, as the loop's Stats would.
func (l *fakeLoop) turn() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stats.Turns++
}

// fakeAgents are loaded agents that hold code bytes, all idle.
type fakeAgents struct{ loaded, code atomic.Int64 }

func (a *fakeAgents) EvictIdle() int  { return int(a.loaded.Swap(0)) }
func (a *fakeAgents) HeldCode() int64 { return a.code.Load() }

// testGuard is a guard of limitMB over loop and agents, with the daemon's
// reserve, that reads its anonymous memory from rss. The tests call Check
// themselves: its goroutine's first tick is an hour away.
func testGuard(limitMB int, loop Shedder, agents Agents, rss *atomic.Int64) *Guard {
	g := NewGuard(GuardOptions{LimitMB: limitMB, Reserve: 16 << 20, Loop: loop, Agents: agents,
		Anon: func() (int64, error) { return rss.Load(), nil }})
	g.every = time.Hour
	return g
}

func TestMemGuard(t *testing.T) {
	ctx := context.Background()
	loop := &fakeLoop{stats: runtime.Stats{Resident: 3}}
	agents := new(fakeAgents)
	agents.loaded.Store(1)
	var rss atomic.Int64
	g := testGuard(40, loop, agents, &rss)

	rss.Store(20 << 20)
	g.Check(ctx)
	assert.Equal(t, int64(1), agents.loaded.Load(), "under the high-water mark nothing happens")
	assert.Equal(t, 3, loop.resident())

	rss.Store(46 << 20) // over 40 MiB + 1/8, and evicting does not help
	g.Check(ctx)
	assert.Zero(t, agents.loaded.Load(), "idle agents are evicted first")
	assert.Zero(t, loop.resident(), "and idle sessions")
	assert.True(t, loop.refusing(), "then new turns are refused")
	assert.True(t, g.Busy())

	g.Check(ctx) // still high: stays busy
	assert.True(t, loop.refusing())

	rss.Store(42 << 20) // between the marks: still busy
	g.Check(ctx)
	assert.True(t, loop.refusing())

	rss.Store(35 << 20) // under the limit: it recovers by itself
	g.Check(ctx)
	assert.False(t, loop.refusing())
	assert.False(t, g.Busy())
}

// Start sets the soft limit and Go's default collector target; Stop waits
// for the guard's goroutine and puts both back as they were.
func TestMemGuard_StartStop(t *testing.T) {
	ctx := context.Background()
	var rss atomic.Int64
	g := testGuard(8<<10, &fakeLoop{}, new(fakeAgents), &rss) // high enough not to slow other tests
	require.NoError(t, g.Stop(ctx), "a guard never started stops at once")
	before := debug.SetMemoryLimit(-1)
	gcBefore := gcPercentNow()
	require.NoError(t, g.Start(ctx))
	assert.Equal(t, int64(8<<30), debug.SetMemoryLimit(-1), "the guard's limit is in force")
	if os.Getenv("GOGC") == "" {
		assert.Equal(t, 100, gcPercentNow(), "the guard starts at Go's default; Check follows the live heap")
	}
	require.NoError(t, g.Stop(ctx))
	assert.Equal(t, before, debug.SetMemoryLimit(-1))
	assert.Equal(t, gcBefore, gcPercentNow(), "the collector's target is put back")

	expired, cancel := context.WithCancel(ctx)
	cancel()
	assert.NoError(t, g.Stop(expired), "a stopped guard says so whatever the deadline")
}

// The guard's life is bounded by Start's ctx: once it ends, the limit is
// put back without Stop, and Stop then returns at once.
func TestMemGuard_StartCtxEnds(t *testing.T) {
	var rss atomic.Int64
	g := testGuard(8<<10, &fakeLoop{}, new(fakeAgents), &rss)
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, g.Start(ctx))
	cancel()
	<-g.done
	assert.Equal(t, before, debug.SetMemoryLimit(-1))
	assert.NoError(t, g.Stop(ctx))
}

// The collector's target follows the live heap: Go's default while it is
// small, half its size once the headroom that gives is over 2 MiB.
func TestGCPercentFor(t *testing.T) {
	for live, want := range map[uint64]int{0: 100, 1 << 20: 100, 2 << 20: 100, 3 << 20: 66, 4 << 20: 50, 64 << 20: 50} {
		assert.Equal(t, want, gcPercentFor(live), "live %d MiB", live>>20)
	}
	assert.NotZero(t, liveHeap(gcPercentNow()), "the runtime reports its heap goal")
}

// gcPercentNow reads the collector's target (SetGCPercent is the only
// reader, so it sets the value back at once).
func gcPercentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// While an agent builds (a cold WASM compile), the soft limit doubles and
// a high resident set refuses no turn; after it, both are as before.
func TestMemGuard_BuildHeadroom(t *testing.T) {
	ctx := context.Background()
	loop := new(fakeLoop)
	var rss atomic.Int64
	g := testGuard(40, loop, new(fakeAgents), &rss)
	prev := debug.SetMemoryLimit(-1)
	gctx, stop := context.WithCancel(ctx)
	require.NoError(t, g.Start(gctx))
	defer func() {
		stop()
		require.NoError(t, g.Stop(ctx))
		assert.Equal(t, prev, debug.SetMemoryLimit(-1), "the limit is put back")
	}()
	require.Equal(t, int64(40<<20), debug.SetMemoryLimit(-1), "the guard's limit is in force")

	done := g.Building()
	assert.Equal(t, int64(80<<20), debug.SetMemoryLimit(-1), "a build gets twice the limit")
	second := g.Building()
	second()
	assert.Equal(t, int64(80<<20), debug.SetMemoryLimit(-1), "until the last build ends")

	rss.Store(46 << 20)
	g.Check(ctx)
	assert.False(t, loop.refusing(), "no turn is refused for a build's heap")

	done()
	assert.Equal(t, int64(40<<20), debug.SetMemoryLimit(-1))
	g.Check(ctx)
	assert.True(t, loop.refusing(), "after it, the guard refuses as before")
}

// The heap's soft limit is the limit less the agents' compiled code,
// which the Go runtime does not count as its own, but never under the
// daemon's reserve.
func TestMemGuard_SoftLimit(t *testing.T) {
	ctx := context.Background()
	agents := new(fakeAgents)
	var rss atomic.Int64
	rss.Store(20 << 20)
	g := testGuard(64, new(fakeLoop), agents, &rss)
	prev := debug.SetMemoryLimit(-1)
	require.NoError(t, g.Start(ctx))
	defer func() {
		require.NoError(t, g.Stop(ctx))
		assert.Equal(t, prev, debug.SetMemoryLimit(-1))
	}()
	assert.Equal(t, int64(64<<20), debug.SetMemoryLimit(-1), "no agent holds code yet")
	agents.code.Store(15 << 20)
	g.Check(ctx)
	assert.Equal(t, int64(49<<20), debug.SetMemoryLimit(-1), "64 MiB less 15 MiB of code")
	agents.code.Store(60 << 20)
	g.Check(ctx)
	assert.Equal(t, int64(16<<20), debug.SetMemoryLimit(-1), "the reserve is the floor")
}

// The heap's free pages go back to the kernel once per quiet spell: not
// while turns begin, and again after the next turn.
func TestMemGuard_ReturnsMemoryWhenQuiet(t *testing.T) {
	ctx := context.Background()
	loop := new(fakeLoop)
	var rss atomic.Int64
	g := testGuard(40, loop, new(fakeAgents), &rss)
	released := 0
	g.release = func() { released++ }

	g.idle(ctx)
	assert.Equal(t, 1, released, "a quiet daemon returns what it does not use")
	g.idle(ctx)
	assert.Equal(t, 1, released, "once per quiet spell")

	loop.turn()
	g.idle(ctx)
	assert.Equal(t, 1, released, "a turn began since the last check: not quiet yet")
	g.idle(ctx)
	assert.Equal(t, 2, released, "quiet again after the turn")
}

// brokenDB is a database whose mapping cannot be held.
type brokenDB struct{ calls int }

func (d *brokenDB) Mapped(func(path string) error) error {
	d.calls++
	return errors.New("no mapping")
}

// The database's pages are dropped at every check; a failure to is
// logged once, not every two seconds.
func TestMemGuard_DropPagesLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	db := new(brokenDB)
	g := NewGuard(GuardOptions{LimitMB: 40, Loop: new(fakeLoop), Agents: new(fakeAgents), DB: db,
		Anon:   func() (int64, error) { return 0, nil },
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	g.dropPages()
	g.dropPages()
	assert.Equal(t, 2, db.calls)
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("cannot drop mapped file pages")), logs.String())
	assert.Contains(t, logs.String(), "no mapping")
}
