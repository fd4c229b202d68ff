package upkeep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// Guard keeps the daemon under its memory budget: the Go heap gets a
// soft limit (debug.SetMemoryLimit, runtime.memory_limit_mb), and the
// process's anonymous memory (the heap, stacks, compiled WASM: not the
// binary's or the database's file pages, which the kernel can take back)
// is sampled; above the high-water mark (the limit plus an eighth) idle
// agents and sessions are evicted, and if that is not enough new turns are
// refused ("busy, try again shortly") until it is back under the limit.
// It never crashes the daemon for memory. What loaded agents hold whatever
// they do (their compiled WASM tools) is a fixed cost the agent cache
// keeps within a budget (lite/agentcache/agentbudget.go): the guard does not evict
// an agent the budget holds (Agents.EvictIdle spares it), and takes their
// code off the heap's soft limit.
type Guard struct {
	limit     int64 // bytes
	high, low int64
	reserve   int64 // the soft limit's floor (GuardOptions.Reserve)
	every     time.Duration
	loop      Shedder
	agents    Agents
	log       *slog.Logger
	rss       func() (int64, error)
	// busy: the guard has the loop refusing new turns. Only Check writes
	// it; Busy may read it from any goroutine.
	busy atomic.Bool
	// tuneGC: Check sets the collector's target from the live heap
	// (gcPercentFor); false when GOGC is set in the environment.
	tuneGC    bool
	gcPercent int // the target Check set last
	// exe are the binary's pages, dropped from the resident set at every
	// check; turns is the loop's turn count at the last check, and
	// returned says whether the heap's free pages went back to the kernel
	// since a turn last began (see memtrim.go).
	exe      exePages
	db       Mapper // its mapped pages are dropped too; nil: none
	pagesErr bool   // the error of dropPages is logged once
	turns    uint64
	returned bool
	release  func() // debug.FreeOSMemory; tests count the calls

	// builds counts the agent builds under way (compiling WASM tools):
	// while one runs the soft limit is doubled and no turn is refused.
	mu      sync.Mutex
	builds  int
	running bool // run has set the soft limit and not put it back yet
	// stop ends the goroutine Start began, and done is closed once it
	// has returned; both nil until Start.
	stop context.CancelFunc
	done chan struct{}
}

// Shedder is what the guard asks of the event loop (runtime.Loop): its
// gauges, to tell a quiet daemon, and shedding, to drop idle sessions and
// refuse new turns while memory is short.
type Shedder interface {
	Stats(ctx context.Context) (runtime.Stats, error)
	Shed(ctx context.Context, busy bool) (int, error)
}

// Agents is what the guard asks of the agent cache.
type Agents interface {
	// EvictIdle evicts the agents it can win memory back from (none with
	// a turn running, none its budget holds) and reports how many went.
	EvictIdle() int
	// HeldCode is what the loaded agents hold outside the Go heap, their
	// compiled code, which the runtime does not count as its own.
	HeldCode() int64
}

// Mapper is the database as the guard sees it (storage.Store): Mapped
// calls fn with the path of its file while holding its mapping in place.
type Mapper interface {
	Mapped(fn func(path string) error) error
}

// GuardOptions are what a Guard watches and acts on.
type GuardOptions struct {
	// LimitMB is runtime.memory_limit_mb, the daemon's memory budget; it
	// must be positive (the root starts no guard without a limit).
	LimitMB int
	// Reserve is what the daemon needs beside its agents: however much
	// code the agents hold, the heap's soft limit stays at least this
	// (or the limit, if that is smaller).
	Reserve int64
	Loop    Shedder
	Agents  Agents
	// DB is the database, whose mapped pages are dropped from the
	// resident set with the binary's; nil: only the binary's.
	DB Mapper
	// Anon reads the process's resident anonymous memory; nil reads it
	// through runtime/hostfacts. Tests give the figure.
	Anon func() (int64, error)
	// Logger gets what the guard does; nil discards it.
	Logger *slog.Logger
}

// NewGuard returns a guard that does nothing until Start.
func NewGuard(o GuardOptions) *Guard {
	limit := int64(o.LimitMB) << 20
	g := &Guard{limit: limit, high: limit * 9 / 8, low: limit, reserve: o.Reserve, every: 2 * time.Second,
		loop: o.Loop, agents: o.Agents, db: o.DB, log: o.Logger, rss: o.Anon, release: debug.FreeOSMemory}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.rss == nil {
		g.rss = selfAnon(new(hostfacts.Reader))
	}
	return g
}

// selfAnon reads this process's resident anonymous memory: its own, the
// part the guard can do something about. The binary's and the database's
// file pages are not counted: the kernel can take them back at any time,
// and the guard drops them from the resident set anyway (memtrim.go).
func selfAnon(host *hostfacts.Reader) func() (int64, error) {
	return func() (int64, error) {
		m, err := host.Self()
		return m.Anon, err
	}
}

// The collector's target while the guard runs follows the live heap: the
// heap may grow by half its live size between collections instead of
// doubling (Go's default, GOGC 100), but by at least gcHeadroom, so that
// a small heap (a start, a one-shot run, an agent's build) is not
// collected over and over. The daemon's live heap is small, so collecting
// more often costs little CPU and saves megabytes of resident memory: the
// memory gate peaked at 44 MiB instead of 47.5–50 MiB, at the same turns
// per second, with 4 MiB of headroom, and 2 MiB took another 2 MiB off
// it (its live heap is about 4 MiB). The target is set at the guard's
// checks from the heap the last collection found, so an agent's build,
// which starts from a small idle heap, keeps Go's default. GOGC in the
// environment wins.
const (
	gcHeadroom   = 2 << 20
	gcPercentMin = 50
	// envGOGC, Go's collector target in percent, keeps the memory guard
	// from tuning the collector when it is set: the variable wins.
	envGOGC = "GOGC"
)

// heldShare: between turns the sessions in memory hold at most
// 1/heldShare of the memory limit (2 MiB of windows at the default 64 MB,
// some 10 full 40,000-token windows or 12,000 short messages); beyond it
// the least recently used idle ones leave memory and come back from disk
// on their next message (runtime.Options.HeldBytes). It was a twentieth
// of the 40 MB default; the default grew by 24 MB to make room for
// agents' compiled WASM tools (lite/agentcache/agentbudget.go), not for sessions, so
// the share shrank to keep them at 2 MiB (at a twentieth the memory
// gate's daemon held 2 MiB more anonymous memory and peaked 1 MiB higher).
const heldShare = 32

// HeldBytes is runtime.Options.HeldBytes for a memory limit of limitMB
// (0 without a limit: the runtime's default).
func HeldBytes(limitMB int) int64 { return int64(limitMB) << 20 / heldShare }

// gcPercentFor is the collector's target for a live heap of live bytes.
func gcPercentFor(live uint64) int {
	return min(max(int(gcHeadroom*100/max(live, 1)), gcPercentMin), 100)
}

// liveHeap estimates the live heap the last collection marked, from the
// heap goal it set (goal = live × (1 + GOGC/100)), gcPercent being the
// target then. ReadMemStats stops the world for a few microseconds every
// few seconds; runtime/metrics would read it exactly, but its tables of
// metric descriptions cost the binary more than the estimate is off.
func liveHeap(gcPercent int) uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.NextGC * 100 / uint64(100+max(gcPercent, 0))
}

// Start sets the soft limit and the collector's target (in force when
// Start returns) and runs the guard in a goroutine until ctx ends or Stop
// is called, which puts both back as they were. It never fails; a second
// call does nothing.
func (g *Guard) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done != nil {
		return nil
	}
	prev := debug.SetMemoryLimit(g.softLimit())
	prevGC := -2 // unchanged
	if os.Getenv(envGOGC) == "" {
		prevGC = debug.SetGCPercent(100)
		g.tuneGC, g.gcPercent = true, 100
	}
	g.running = true
	ctx, g.stop = context.WithCancel(ctx)
	done := make(chan struct{})
	g.done = done
	go func() {
		defer close(done)
		defer func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.running = false
			debug.SetMemoryLimit(prev)
			if prevGC != -2 {
				debug.SetGCPercent(prevGC)
			}
		}()
		g.run(ctx)
	}()
	return nil
}

// Stop ends the goroutine Start began and waits for it, which puts the
// soft limit and the collector's target back, at most until ctx ends. A
// guard that was never started, or has stopped already, returns nil at
// once.
func (g *Guard) Stop(ctx context.Context) error {
	g.mu.Lock()
	stop, done := g.stop, g.done
	g.mu.Unlock()
	if done == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		select {
		case <-done: // over as ctx ended: stopped all the same
			return nil
		default:
			return fmt.Errorf("stop the memory guard: %w", ctx.Err())
		}
	}
}

// dropPages drops the binary's and the database's mapped file pages from
// the resident set (memtrim.go); a failure is logged once.
func (g *Guard) dropPages() {
	err := g.exe.drop()
	if g.db != nil {
		if _, e := dropDB(g.db); e != nil {
			err = errors.Join(err, e)
		}
	}
	if err != nil && !g.pagesErr {
		g.pagesErr = true
		g.log.Debug("cannot drop mapped file pages from memory", "err", err)
	}
}

// idle returns the heap's free pages to the kernel once per quiet spell:
// no turn began since the last check and none runs. The collector's
// scavenger would return them too, but slowly, and a daemon waiting for
// its next message should hold only what it uses.
func (g *Guard) idle(ctx context.Context) {
	st, err := g.loop.Stats(ctx)
	if err != nil {
		return
	}
	if st.Turns != g.turns || st.Running > 0 || st.Parked > 0 {
		g.turns, g.returned = st.Turns, false
		return
	}
	if !g.returned {
		g.returned = true
		g.release()
	}
}

// run samples until ctx ends.
func (g *Guard) run(ctx context.Context) {
	t := time.NewTicker(g.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.Check(ctx)
			g.idle(ctx)
			// Last: a collection touches much of the runtime's code and
			// tables, which would be mapped again at once.
			g.dropPages()
		}
	}
}

// softLimit is the Go heap's soft limit, with g.mu held: the limit less
// what the loaded agents hold outside the heap (their compiled code),
// which the runtime does not count as its own, so that heap and code
// together stay near the limit; or twice the limit while an agent builds.
// Without the code taken off, the heap kept freed pages up to the whole
// limit beside 26 MiB of code, and the guard shed sessions every few
// turns of an agent with two Go tools.
func (g *Guard) softLimit() int64 {
	if g.builds > 0 {
		return 2 * g.limit // a build that began first keeps its headroom
	}
	return max(g.limit-g.agents.HeldCode(), min(g.reserve, g.limit))
}

// setSoftLimit sets the soft limit for the agents loaded now.
func (g *Guard) setSoftLimit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		debug.SetMemoryLimit(g.softLimit())
	}
}

// Building gives an agent build headroom until the func it returns is
// called; the agent cache calls it as each build begins. A cold compile
// of a large WASM module needs a heap above the soft limit for a few
// seconds: held to the limit, the collector would run back to back,
// slowing every session's stream and the compile itself (measured: 4×
// longer, tokens held up by half a second). Twice the limit lets it
// through; once the last build ends the limit is back and the collector
// returns what the compile used.
func (g *Guard) Building() (done func()) {
	g.mu.Lock()
	if g.builds++; g.builds == 1 && g.running {
		debug.SetMemoryLimit(g.softLimit())
	}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.builds--; g.builds == 0 && g.running {
			debug.SetMemoryLimit(g.softLimit())
		}
	}
}

// compiling reports whether an agent build is under way.
func (g *Guard) compiling() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.builds > 0
}

// Busy reports whether the guard has the loop refusing new turns, memory
// being short.
func (g *Guard) Busy() bool { return g.busy.Load() }

// Check samples once and acts, as the guard's goroutine does every two
// seconds; a caller that knows memory just grew may call it too, but not
// concurrently with another Check. While an agent builds, its heap is
// transient: idle agents and sessions are still evicted, but no turn is
// refused for it.
func (g *Guard) Check(ctx context.Context) {
	g.setSoftLimit()
	if g.tuneGC {
		g.gcPercent = gcPercentFor(liveHeap(g.gcPercent))
		debug.SetGCPercent(g.gcPercent)
	}
	rss, err := g.rss()
	if err != nil {
		return
	}
	busy := g.busy.Load()
	switch {
	case rss >= g.high:
		agents := g.agents.EvictIdle()
		sessions, _ := g.loop.Shed(ctx, busy)
		debug.FreeOSMemory()
		after, _ := g.rss()
		g.log.Warn("memory high: evicted idle agents and sessions", "anon_mb", rss>>20, "after_mb", after>>20,
			"limit_mb", g.limit>>20, "agents", agents, "sessions", sessions)
		if after >= g.high && !busy && !g.compiling() {
			g.busy.Store(true)
			_, _ = g.loop.Shed(ctx, true)
			g.log.Error("memory still high: refusing new turns until it falls", "anon_mb", after>>20, "limit_mb", g.limit>>20)
		}
	case busy && rss < g.low:
		g.busy.Store(false)
		_, _ = g.loop.Shed(ctx, false)
		g.log.Info("memory back under the budget: taking turns again", "anon_mb", rss>>20)
	}
}
