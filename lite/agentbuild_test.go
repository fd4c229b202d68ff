package lite

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// gateBuilds makes the cache's next builds block in the middle (where the
// provider is made) until gate is closed; it counts them and tells of each
// on started.
func gateBuilds(c *agentCache) (gate chan struct{}, builds *atomic.Int32, started chan struct{}) {
	gate, builds, started = make(chan struct{}), new(atomic.Int32), make(chan struct{}, 8)
	made := c.newProvider
	c.newProvider = func(m agents.Model) (runtime.Provider, error) {
		builds.Add(1)
		started <- struct{}{}
		<-gate
		return made(m)
	}
	return gate, builds, started
}

// A build holds no lock: while one runs, built agents are looked up,
// loaded and pinned; callers wanting the agent being built share its one
// build.
func TestAgentCache_BuildHoldsNoLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := lruCache(t, 2, "other")
		defer c.close()
		_, err := c.LoadAgent("assistant")
		require.NoError(t, err)
		gate, builds, _ := gateBuilds(c)
		got := make(chan *runtime.LoadedAgent, 2)
		for range 2 {
			go func() {
				a, err := c.LoadAgent("other")
				assert.NoError(t, err)
				got <- a
			}()
		}
		synctest.Wait()
		assert.Equal(t, int32(1), builds.Load(), "one build for both callers")

		_, ok := c.CachedAgent("assistant")
		assert.True(t, ok, "a built agent is looked up during the build")
		_, ok = c.CachedAgent("other")
		assert.False(t, ok, "the agent being built is not there yet")
		c.Pin("assistant")
		c.Unpin("assistant")
		_, err = c.LoadAgent("assistant")
		require.NoError(t, err)
		assert.Equal(t, 1, c.loadedCount())

		close(gate)
		a, b := <-got, <-got
		assert.Same(t, a, b)
		cached, ok := c.CachedAgent("other")
		assert.True(t, ok)
		assert.Same(t, a, cached)
		assert.Equal(t, int32(1), builds.Load())
	})
}

// An agent pinned before its build (a turn waiting for it) is never
// evicted by the builds that finish around it.
func TestAgentCache_PinnedWhileBuiltIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := lruCache(t, 1, "other", "third")
		defer c.close()
		c.Pin("other") // a turn of other waits for its build
		gate, _, _ := gateBuilds(c)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err := c.LoadAgent("other")
			assert.NoError(t, err)
		}()
		synctest.Wait()
		close(gate)
		<-done
		for _, n := range []string{"assistant", "third"} {
			_, err := c.LoadAgent(n)
			require.NoError(t, err)
		}
		assert.ElementsMatch(t, []string{"other", "third"}, loaded(c), "the pinned agent stayed; the idle one went")
		c.Unpin("other")
		assert.Equal(t, 2, c.evictIdle())
	})
}

// close waits for the builds under way, releases what they built, and
// nothing is built after it.
func TestAgentCache_CloseWaitsForBuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestCache(t)
		gate, _, _ := gateBuilds(c)
		built := make(chan error, 1)
		go func() {
			_, err := c.LoadAgent("assistant")
			built <- err
		}()
		synctest.Wait()
		closed := make(chan struct{})
		go func() {
			c.close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("close returned while a build ran")
		default:
		}
		close(gate)
		<-closed
		assert.ErrorIs(t, <-built, runtime.ErrClosed)
		assert.Equal(t, 0, c.loadedCount())
		_, err := c.LoadAgent("assistant")
		assert.ErrorIs(t, err, runtime.ErrClosed)
	})
}

// In the daemon: while an agent builds, a session of another agent runs a
// whole turn and the loop answers the watchdog's ping; the session being
// created waits for the build and gets the agent's error when it fails.
func TestApp_AgentBuildsOffTheLoop(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	_, err = agents.WriteTemplate(cfg.AgentsDir, "other")
	require.NoError(t, err)
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)

	gate, builds, started := gateBuilds(app.Agents)
	created := make(chan error, 2)
	for _, name := range []string{"other", "ghost"} {
		go func() {
			_, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: name})
			created <- err
		}()
	}
	<-started // other's build runs, and blocks
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: "hello"})
	require.NoError(t, err)
	var text string
	for e := range sub.C() {
		if e.Type == runtime.EvToken {
			text += e.Content
		}
		if e.Type == runtime.EvTurnEnd {
			assert.Equal(t, runtime.TurnCompleted, e.Reason)
			break
		}
	}
	assert.Equal(t, "echo: hello", text)
	require.NoError(t, app.Loop.Ping(ctx))

	err = <-created
	assert.ErrorIs(t, err, ErrAgentNotFound, "a missing agent fails before its provider is made")
	assert.Contains(t, err.Error(), `create it with "agnx-lite agent create ghost"`)
	assert.Len(t, created, 0, "other still builds")
	close(gate)
	require.NoError(t, <-created)
	assert.Equal(t, int32(1), builds.Load())
}
