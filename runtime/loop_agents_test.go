package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// gatedLoader is an agent cache whose builds block until the test lets
// them finish: the agents in built answer at once, the others are built
// (from agents, or failing with fails) once the gate opens. It counts
// builds and pins.
type gatedLoader struct {
	mu     sync.Mutex
	built  map[string]*runtime.LoadedAgent
	agents map[string]*runtime.LoadedAgent
	fails  map[string]error
	gate   chan struct{}
	builds map[string]int
	pins   map[string]int
	// started is told of each build as it begins.
	started chan string
}

func newGatedLoader(agents map[string]*runtime.LoadedAgent) *gatedLoader {
	open := make(chan struct{})
	close(open)
	return &gatedLoader{built: map[string]*runtime.LoadedAgent{}, agents: agents, fails: map[string]error{},
		gate: open, builds: map[string]int{}, pins: map[string]int{}, started: make(chan string, 16)}
}

// hold makes builds block until the returned func is called.
func (g *gatedLoader) hold() (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gate := make(chan struct{})
	g.gate = gate
	return sync.OnceFunc(func() { close(gate) })
}

// evict forgets a built agent: its next use builds it again.
func (g *gatedLoader) evict(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.built, name)
}

func (g *gatedLoader) CachedAgent(name string) (*runtime.LoadedAgent, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a, ok := g.built[name]
	return a, ok
}

func (g *gatedLoader) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	g.mu.Lock()
	g.builds[name]++
	gate := g.gate
	g.mu.Unlock()
	g.started <- name
	<-gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.fails[name]; err != nil {
		return nil, err
	}
	a, ok := g.agents[name]
	if !ok {
		return nil, errors.New(`no agent "` + name + `": create it with "agnx-lite agent create ` + name + `"`)
	}
	g.built[name] = a
	return a, nil
}

func (g *gatedLoader) Pin(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pins[name]++
}

func (g *gatedLoader) Unpin(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pins[name]--
}

func (g *gatedLoader) count(name string) (builds, pins int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.builds[name], g.pins[name]
}

// instantAgent is an agent whose model answers "ok" at once, in process:
// for tests inside a synctest bubble, where a loopback server cannot run.
func instantAgent(name string, onDisconnect agents.OnDisconnect) *runtime.LoadedAgent {
	return &runtime.LoadedAgent{Provider: instant{}, Spec: &agents.Agent{Name: name,
		Session: agents.Session{OnDisconnect: onDisconnect, Context: agents.Context{MaxHistoryTokens: 2000}}}}
}

// bubbleLoop runs a loop on a new store inside a synctest bubble; stop
// ends it and returns Run's error. The store closes at the test's end.
func bubbleLoop(t *testing.T, opts runtime.Options) (l *runtime.Loop, st *storage.Store, stop func() error) {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	opts.Store = st
	l = runtime.New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() { exited <- l.Run(ctx) }()
	<-l.Ready()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-exited
	})
	t.Cleanup(func() {
		assert.NoError(t, stop())
		assert.NoError(t, st.Close())
	})
	return l, st, stop
}

func logOf(t *testing.T, st *storage.Store, sid string) []runtime.Event {
	t.Helper()
	var evs []runtime.Event
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		evs = append(evs, e)
		return nil
	}))
	return evs
}

// The loop never waits for a build: while an agent's build blocks, a
// session of a built agent streams a whole turn and Ping answers.
func TestLoop_BuildDoesNotBlockTheLoop(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
	g.built["assistant"] = h.agent
	h.opts.Agents = g
	h.restart()
	sid := h.session()
	release := g.hold()
	defer release()

	created := make(chan error, 1)
	go func() {
		info, err := h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "slow"})
		if err == nil && info.Agent != "slow" {
			err = errors.New("created a session of " + info.Agent)
		}
		created <- err
	}()
	require.Equal(t, "slow", <-g.started, "the build runs")

	evs := h.turn(sid, "hello")
	assert.Equal(t, "echo: hello", tokens(evs), "tokens stream while the other agent builds")
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.loop.Ping(ctx), "the watchdog's ping answers")
	select {
	case err := <-created:
		t.Fatalf("the session was created before its agent was built: %v", err)
	default:
	}

	release()
	require.NoError(t, <-created)
	builds, _ := g.count("slow")
	assert.Equal(t, 1, builds)
}

// A session created with its agent's spec starts at once, without a
// build: its first turn builds the agent, and waits for it.
func TestLoop_CreateSessionWithSpecDoesNotBuild(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	slow := instantAgent("slow", "pause")
	g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": slow})
	h.opts.Agents = g
	h.restart()
	release := g.hold()
	defer release()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := h.loop.CreateSession(ctx, runtime.NewSession{Agent: "slow", Spec: slow.Spec})
	require.NoError(t, err, "created while no build may finish")
	assert.Equal(t, "slow", info.Agent)
	builds, _ := g.count("slow")
	assert.Zero(t, builds, "no build for a session's start")

	_, err = h.loop.Send(ctx, info.ID, runtime.Input{Content: "hello"})
	require.NoError(t, err)
	require.Equal(t, "slow", <-g.started, "its first turn builds the agent")
	release()
	builds, _ = g.count("slow")
	assert.Equal(t, 1, builds)

	// A spec of another agent is not taken for this one's.
	other := instantAgent("other", "pause")
	created := make(chan error, 1)
	release2 := g.hold()
	defer release2()
	go func() {
		_, err := h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "slow2", Spec: other.Spec})
		created <- err
	}()
	require.Equal(t, "slow2", <-g.started, "a mismatched spec waits for the named agent's build")
	release2()
	require.Error(t, <-created, "slow2 does not exist")
}

// Everything that waits for one agent shares one build: sessions being
// created and a turn about to start.
func TestLoop_OneBuildPerAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
		l, st, _ := bubbleLoop(t, runtime.Options{Agents: g})
		ctx := context.Background()
		first, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
		require.NoError(t, err)
		<-g.started
		g.evict("slow")
		release := g.hold()

		_, err = l.Send(ctx, first.ID, runtime.Input{Content: "hi"}) // its turn waits for the agent
		require.NoError(t, err)
		created := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
				created <- err
			}()
		}
		synctest.Wait() // every request has reached the loop and waits
		builds, pins := g.count("slow")
		assert.Equal(t, 2, builds, "the first session's build, then one for all four")
		assert.Equal(t, 2, pins, "the waiting turn pinned its agent before the look-up, and the build pins what it finds")
		assert.Len(t, created, 0)

		release()
		for range 3 {
			require.NoError(t, <-created)
		}
		synctest.Wait()
		evs := logOf(t, st, first.ID)
		require.Equal(t, runtime.EvTurnEnd, evs[len(evs)-1].Type)
		assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
		assert.Equal(t, "ok", find(evs, runtime.EvAssistant)[0].Content)
		builds, pins = g.count("slow")
		assert.Equal(t, 2, builds)
		assert.Equal(t, 0, pins)
	})
}

// A build pins its agent from before the look-up until whoever waited has
// the result: a turn that joins it late is handed a version nothing could
// evict meanwhile. Then the pin is given back.
func TestLoop_BuildPinsUntilHandedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
		l, _, _ := bubbleLoop(t, runtime.Options{Agents: g})
		release := g.hold()
		created := make(chan error, 1)
		go func() {
			_, err := l.CreateSession(context.Background(), runtime.NewSession{Agent: "slow"})
			created <- err
		}()
		<-g.started
		synctest.Wait()
		_, pins := g.count("slow")
		assert.Equal(t, 1, pins, "no turn waits, yet the build holds a pin")
		release()
		require.NoError(t, <-created)
		synctest.Wait()
		_, pins = g.count("slow")
		assert.Equal(t, 0, pins)
	})
}

// Builds of different agents run at once only up to MaxBuilds.
func TestLoop_BuildsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"a": instantAgent("a", "pause"), "b": instantAgent("b", "pause")})
		l, _, _ := bubbleLoop(t, runtime.Options{Agents: g, MaxBuilds: 1})
		release := g.hold()
		created := make(chan error, 2)
		for _, name := range []string{"a", "b"} {
			go func() {
				_, err := l.CreateSession(context.Background(), runtime.NewSession{Agent: name})
				created <- err
			}()
		}
		synctest.Wait()
		first := <-g.started
		assert.Len(t, g.started, 0, "the second build waits for a slot")
		release()
		second := <-g.started
		assert.ElementsMatch(t, []string{"a", "b"}, []string{first, second})
		require.NoError(t, <-created)
		require.NoError(t, <-created)
	})
}

// A build that fails reaches whoever waited: the caller creating a session
// gets the loader's sentence, and a turn fails with it.
func TestLoop_BuildErrorReachesTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"flaky": instantAgent("flaky", "pause")})
		broken := errors.New("agents/flaky/agent.yaml:3: spec.model is missing: name a model")
		l, st, _ := bubbleLoop(t, runtime.Options{Agents: g})
		ctx := context.Background()

		_, err := l.CreateSession(ctx, runtime.NewSession{Agent: "ghost"})
		require.EqualError(t, err, `no agent "ghost": create it with "agnx-lite agent create ghost"`)

		info, err := l.CreateSession(ctx, runtime.NewSession{Agent: "flaky"})
		require.NoError(t, err)
		g.evict("flaky")
		g.mu.Lock()
		g.fails["flaky"] = broken
		g.mu.Unlock()
		_, err = l.Send(ctx, info.ID, runtime.Input{Content: "hi"})
		require.NoError(t, err)
		synctest.Wait()
		evs := logOf(t, st, info.ID)
		errs := find(evs, runtime.EvError)
		require.Len(t, errs, 1)
		assert.Equal(t, "agent_unavailable", errs[0].Code)
		assert.Equal(t, broken.Error(), errs[0].Content)
		assert.Equal(t, runtime.TurnFailed, evs[len(evs)-1].Reason)
		_, pins := g.count("flaky")
		assert.Equal(t, 0, pins)
	})
}

// A turn cancelled while its agent builds ends at once; the build's result
// then starts nothing.
func TestLoop_CancelWhileTheAgentBuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
		l, st, _ := bubbleLoop(t, runtime.Options{Agents: g})
		ctx := context.Background()
		info, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
		require.NoError(t, err)
		g.evict("slow")
		release := g.hold()
		_, err = l.Send(ctx, info.ID, runtime.Input{Content: "hi"})
		require.NoError(t, err)
		synctest.Wait()
		cancelled, err := l.Cancel(ctx, info.ID)
		require.NoError(t, err)
		assert.True(t, cancelled)
		release()
		synctest.Wait()
		evs := logOf(t, st, info.ID)
		assert.Equal(t, []runtime.EventType{runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvTurnEnd}, types(evs))
		assert.Equal(t, runtime.TurnCancelled, evs[len(evs)-1].Reason)
		_, pins := g.count("slow")
		assert.Equal(t, 0, pins)
		st2, err := l.Stats(ctx)
		require.NoError(t, err)
		assert.Equal(t, 0, st2.Running, "the turn gave its slot back")
	})
}

// A shutdown while an agent builds: callers waiting for it are told the
// daemon is stopping, a turn waiting for it is interrupted, and Run
// returns once the build worker has finished.
func TestLoop_ShutdownWhileAnAgentBuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
		l, st, stop := bubbleLoop(t, runtime.Options{Agents: g})
		ctx := context.Background()
		info, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
		require.NoError(t, err)
		<-g.started
		g.evict("slow")
		release := g.hold()
		_, err = l.Send(ctx, info.ID, runtime.Input{Content: "hi"})
		require.NoError(t, err)
		created := make(chan error, 1)
		go func() {
			_, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
			created <- err
		}()
		synctest.Wait()

		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		synctest.Wait()
		require.ErrorIs(t, <-created, runtime.ErrClosed)
		assert.Len(t, stopped, 0, "Run waits for its build worker")
		release()
		require.NoError(t, <-stopped)

		evs := logOf(t, st, info.ID)
		assert.Equal(t, runtime.TurnInterrupted, evs[len(evs)-1].Reason)
		_, pins := g.count("slow")
		assert.Equal(t, 0, pins)
	})
}

// Loading a session never waits for its agent: a session rebuilt from the
// store while its agent builds is subscribed to at once, and the turn it
// then starts shares the build its history budget asked for.
func TestLoop_LoadingASessionDoesNotWaitForItsAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedLoader(map[string]*runtime.LoadedAgent{"slow": instantAgent("slow", "pause")})
		l, st, stop := bubbleLoop(t, runtime.Options{Agents: g})
		ctx := context.Background()
		info, err := l.CreateSession(ctx, runtime.NewSession{Agent: "slow"})
		require.NoError(t, err)
		require.NoError(t, stop())

		g.evict("slow") // a restart: nothing is built
		release := g.hold()
		l = runtime.New(runtime.Options{Store: st, Agents: g})
		runCtx, cancel := context.WithCancel(ctx)
		exited := make(chan error, 1)
		go func() { exited <- l.Run(runCtx) }()
		defer func() {
			cancel()
			assert.NoError(t, <-exited)
		}()

		sub, err := l.Subscribe(ctx, info.ID) // loads the session
		require.NoError(t, err)
		defer sub.Close()
		synctest.Wait()
		builds, _ := g.count("slow")
		require.Equal(t, 2, builds, "the budget's build runs")
		_, err = l.Send(ctx, info.ID, runtime.Input{Content: "hi"})
		require.NoError(t, err)
		require.NoError(t, l.Ping(ctx))
		synctest.Wait()
		release()
		for e := range sub.C() {
			if e.Type == runtime.EvTurnEnd {
				assert.Equal(t, runtime.TurnCompleted, e.Reason)
				break
			}
		}
		builds, _ = g.count("slow")
		assert.Equal(t, 2, builds, "the turn shared it")
	})
}
