package agentcache

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// gateBuilds makes the cache's next builds block in the middle (where the
// provider is made) until gate is closed; it counts them and tells of each
// on started.
func gateBuilds(c *Cache) (gate chan struct{}, builds *atomic.Int32, started chan struct{}) {
	c.newProvider, gate, builds, started = cachetest.GateBuilds(c.newProvider)
	return gate, builds, started
}

// A build holds no lock: while one runs, built agents are looked up,
// loaded and pinned; callers wanting the agent being built share its one
// build.
func TestAgentCache_BuildHoldsNoLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := lruCache(t, 2, "other")
		defer c.Close()
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
		assert.Equal(t, 1, c.Loaded())

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
		defer c.Close()
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
		assert.Equal(t, 2, c.EvictIdle())
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
			c.Close()
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
		assert.Equal(t, 0, c.Loaded())
		_, err := c.LoadAgent("assistant")
		assert.ErrorIs(t, err, runtime.ErrClosed)
	})
}
