package lite

import (
	"context"
	"os"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// guardedApp is an App without a guard of its own (the test drives one)
// and a session of its default agent, on a fake Ollama.
func guardedApp(t *testing.T) (*App, runtime.SessionInfo) {
	t.Helper()
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	info, err := app.Loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	return app, info
}

func TestMemGuard(t *testing.T) {
	app, info := guardedApp(t)
	ctx := context.Background()
	require.Equal(t, 1, app.Agents.loadedCount())

	var rss atomic.Int64
	g := newMemGuard(40, app.Loop, app.Agents, app.log)
	g.rss = func() (int64, error) { return rss.Load(), nil }

	rss.Store(20 << 20)
	g.check(ctx)
	assert.Equal(t, 1, app.Agents.loadedCount(), "under the high-water mark nothing happens")

	rss.Store(46 << 20) // over 40 MiB + 1/8, and evicting does not help
	g.check(ctx)
	assert.Equal(t, 0, app.Agents.loadedCount(), "idle agents are evicted first")
	st, err := app.Loop.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Resident, "and idle sessions")
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.ErrorIs(t, err, runtime.ErrBusy, "then new turns are refused")
	assert.Contains(t, err.Error(), "try again shortly")

	g.check(ctx) // still high: stays busy
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.ErrorIs(t, err, runtime.ErrBusy)

	rss.Store(42 << 20) // between the marks: still busy
	g.check(ctx)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.ErrorIs(t, err, runtime.ErrBusy)

	rss.Store(35 << 20) // under the limit: it recovers by itself
	g.check(ctx)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.NoError(t, err)
}

// App.Close stops the guard, waits for it, and puts the Go memory limit
// back as it was.
func TestMemGuard_StopsWithApp(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 8 << 10 // high enough not to slow other tests
	_, err := config.Init(cfg)
	require.NoError(t, err)
	before := debug.SetMemoryLimit(-1)
	gcBefore := gcPercentNow()
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	require.NotNil(t, app.guard)
	if os.Getenv("GOGC") == "" {
		assert.Equal(t, 100, gcPercentNow(), "the guard starts at Go's default; check follows the live heap")
	}
	require.NoError(t, app.Close())
	select {
	case <-app.guard.done:
	default:
		t.Fatal("Close returned before the guard's goroutine")
	}
	assert.Equal(t, before, debug.SetMemoryLimit(-1))
	assert.Equal(t, gcBefore, gcPercentNow(), "the collector's target is put back")
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
	app, info := guardedApp(t)
	ctx := context.Background()

	var rss atomic.Int64
	g := newMemGuard(40, app.Loop, app.Agents, app.log)
	g.rss = func() (int64, error) { return rss.Load(), nil }
	prev := debug.SetMemoryLimit(-1)
	gctx, stop := context.WithCancel(ctx)
	g.start(gctx)
	defer func() {
		stop()
		g.wait()
		assert.Equal(t, prev, debug.SetMemoryLimit(-1), "the limit is put back")
	}()
	require.Equal(t, int64(40<<20), debug.SetMemoryLimit(-1), "the guard's limit is in force")

	done := g.building()
	assert.Equal(t, int64(80<<20), debug.SetMemoryLimit(-1), "a build gets twice the limit")
	second := g.building()
	second()
	assert.Equal(t, int64(80<<20), debug.SetMemoryLimit(-1), "until the last build ends")

	rss.Store(46 << 20)
	g.check(ctx)
	_, err := app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.NoError(t, err, "no turn is refused for a build's heap")

	done()
	assert.Equal(t, int64(40<<20), debug.SetMemoryLimit(-1))
	g.check(ctx)
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	assert.ErrorIs(t, err, runtime.ErrBusy, "after it, the guard refuses as before")
}

// The heap's free pages go back to the kernel once per quiet spell: not
// while turns begin, and again after the next turn.
func TestMemGuard_ReturnsMemoryWhenQuiet(t *testing.T) {
	app, info := guardedApp(t)
	ctx := context.Background()
	g := newMemGuard(40, app.Loop, app.Agents, app.log)
	released := 0
	g.release = func() { released++ }

	g.idle(ctx)
	assert.Equal(t, 1, released, "a quiet daemon returns what it does not use")
	g.idle(ctx)
	assert.Equal(t, 1, released, "once per quiet spell")

	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hi"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	g.idle(ctx)
	assert.Equal(t, 1, released, "a turn began since the last check: not quiet yet")
	g.idle(ctx)
	assert.Equal(t, 2, released, "quiet again after the turn")
}
