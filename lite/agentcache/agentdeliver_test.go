package agentcache

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// heldDelivery is the real agent cache with one hook: an answer of
// LoadAgent can be held after the cache has given it and before the loop
// has it, which is where the memory guard or the LRU struck in the memory
// gate. It tells of every answer (loaded), Pin and Unpin.
type heldDelivery struct {
	*Cache
	loaded, pinned, unpinned chan string

	mu      sync.Mutex
	release chan struct{} // answers wait until it is closed
}

func (h *heldDelivery) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	h.mu.Lock()
	release := h.release
	h.mu.Unlock()
	la, err := h.Cache.LoadAgent(name)
	h.loaded <- name
	<-release
	return la, err
}

// hold makes the answers from now on wait; the func it returns lets them
// through.
func (h *heldDelivery) hold() (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.release = make(chan struct{})
	return sync.OnceFunc(func() { close(h.release) })
}

func (h *heldDelivery) Pin(name string) {
	h.Cache.Pin(name)
	h.pinned <- name
}

func (h *heldDelivery) Unpin(name string) {
	h.Cache.Unpin(name)
	h.unpinned <- name
}

// A build the loop shares may hand its agent to a turn that joined it
// after the cache answered: an eviction in between (the memory guard's
// evictIdle, the LRU making room) must not close that agent's tools under
// the turn. In the memory gate this was one turn in some 12,000 answered
// "echo said: error: run wasm tool echo: wasmtools: closed".
func TestLoop_SharedBuildKeepsItsAgentOpen(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	c := lruCache(t, 8)
	c.setBudget(0) // no budget of fixed costs: evictIdle evicts every idle agent, this one too
	cachetest.EchoTool(t, filepath.Join(c.cfg.AgentsDir, "assistant", "tools", "echo"))
	defer c.Close()
	h := &heldDelivery{Cache: c, loaded: make(chan string, 8), pinned: make(chan string, 64),
		unpinned: make(chan string, 64), release: make(chan struct{})}
	close(h.release)

	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	l := runtime.New(runtime.Options{Store: st, Agents: h, MaxTurns: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- l.Run(ctx) }()
	stop := sync.OnceFunc(func() { cancel(); assert.NoError(t, <-exited) })
	defer stop()
	<-l.Ready()

	info, err := l.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(t, err)
	<-h.loaded
	if c.pinCount("assistant") > 0 {
		<-h.unpinned // the build's own hold on what it delivered
	}
	require.Equal(t, 1, c.EvictIdle(), "the agent is gone: its next use builds it")

	// A second session is created: its build answers, and the answer is
	// held before the loop has it.
	release := h.hold()
	defer release()
	created := make(chan error, 1)
	go func() {
		_, err := l.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
		created <- err
	}()
	require.Equal(t, "assistant", <-h.loaded)
	c.EvictIdle() // the memory guard strikes

	// A turn starts on the first session: it pins its agent and shares
	// that build's answer.
	sub, err := l.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	drainNames(h.pinned)
	_, err = l.Send(ctx, info.ID, runtime.Input{Content: `use echo {"x":1}`})
	require.NoError(t, err)
	require.Equal(t, "assistant", <-h.pinned)
	release()
	require.NoError(t, <-created)

	var results []string
	for e := range sub.C() {
		if e.Type == runtime.EvToolResult {
			results = append(results, e.Content)
		}
		if e.Type == runtime.EvTurnEnd {
			assert.Equal(t, runtime.TurnCompleted, e.Reason)
			break
		}
	}
	assert.Equal(t, []string{`{"x":1}`}, results, "the turn ran the tools of the agent it was handed")
	stop()
	assert.Equal(t, 0, c.pinCount("assistant"), "every pin was given back")
}

// pinCount is how many pins the agent has.
func (c *Cache) pinCount(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pins[name]
}

func drainNames(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
