package runtime

// Agents for the loop: it only looks them up. Building one (reading its
// files, compiling its WASM tools: seconds on a small board) happens in a
// worker off the loop goroutine, so every other session keeps streaming and
// Ping keeps answering meanwhile. What needs the agent (creating a session,
// starting a turn, a session's history budget) is parked as a callback and
// continued on the loop goroutine when the worker posts the result.

import (
	"sync/atomic"

	"github.com/agnx-lite/agnx-lite/agents"
)

// agentBuilds are the agents being built, with what waits for each. One
// build runs per agent however many wait for it; at most MaxBuilds run at
// once, the others queue.
type agentBuilds struct {
	waiting map[string][]func(*LoadedAgent, error) // by agent; a key is a build queued or running
	queue   []string                               // agents waiting for a build slot, in order
	running int
}

// historyBudget is the agent's history budget (agents.Agent.HistoryBudget:
// max_history_tokens within the model's input tokens), or the default.
func historyBudget(a *LoadedAgent) int {
	if a != nil && a.Spec != nil {
		return a.Spec.HistoryBudget()
	}
	return agents.DefaultMaxHistoryTokens
}

// cachedAgent returns the agent when the loader has it built; it never
// builds.
func (l *Loop) cachedAgent(name string) (*LoadedAgent, bool) {
	if c, ok := l.opts.Agents.(AgentCache); ok {
		return c.CachedAgent(name)
	}
	return nil, false
}

// withAgent calls fn on the loop goroutine with the agent, or with the
// error that says why it cannot be built: at once when the loader has it
// built, otherwise once a worker has built it. fn must check that what it
// continues still stands: other requests run while the agent builds.
func (l *Loop) withAgent(name string, fn func(*LoadedAgent, error)) {
	if a, ok := l.cachedAgent(name); ok {
		fn(a, nil)
		return
	}
	b := &l.builds
	if w, ok := b.waiting[name]; ok {
		b.waiting[name] = append(w, fn) // its build is queued or running: share it
		return
	}
	b.waiting[name] = []func(*LoadedAgent, error){fn}
	b.queue = append(b.queue, name)
	l.startBuilds()
}

// startBuilds starts queued builds while the limit allows.
func (l *Loop) startBuilds() {
	b := &l.builds
	for b.running < l.opts.MaxBuilds && len(b.queue) > 0 {
		name := b.queue[0]
		b.queue[0] = ""
		b.queue = b.queue[1:]
		b.running++
		l.wg.Add(1)
		go l.buildAgent(name)
	}
}

// buildAgent is a build worker: it builds one agent and posts the result
// back. A build cannot be interrupted, so a shutdown waits for it (Run
// returns once every worker has); its result is then dropped, and the
// loader keeps what it built.
//
// The worker pins the agent from before the look-up until the loop hands
// the result on: a turn may join the build after the loader answered, and
// without this pin an eviction in between (the memory guard, the LRU
// making room) would close the tools of the version the turn is then
// handed. Every waiting turn pinned the agent before it looked it up, so
// the loop lets go of the worker's pin just before the replies go out:
// whoever asked for the build finds the agent unpinned when its reply
// comes.
func (l *Loop) buildAgent(name string) {
	defer l.wg.Done()
	p, pins := l.opts.Agents.(AgentPinner)
	if pins {
		p.Pin(name)
	}
	a, err := l.opts.Agents.LoadAgent(name)
	if a == nil && err == nil {
		err = ErrAgentNotFound
	}
	r := &agentBuilt{name: name, agent: a, err: err, handed: make(chan struct{})}
	if pins {
		r.unpin = func() { p.Unpin(name) }
	}
	select {
	case l.inbox <- r:
	case <-l.done:
		r.release()
		return
	}
	select {
	case <-r.handed:
	case <-l.done: // the loop stopped before it took the result
		r.release()
	}
}

// agentBuilt is a build worker's result.
type agentBuilt struct {
	name  string
	agent *LoadedAgent
	err   error
	// handed is closed once every waiter has the result.
	handed chan struct{}
	// unpin lets go of the worker's pin: the loop calls it before it
	// hands the result on, so whoever asked for the build finds the agent
	// unpinned when its reply comes; the worker calls it when the loop
	// stopped first. released makes it happen once.
	unpin    func()
	released atomic.Bool
}

func (r *agentBuilt) release() {
	if r.unpin != nil && r.released.CompareAndSwap(false, true) {
		r.unpin()
	}
}

func (r *agentBuilt) handle(l *Loop) {
	b := &l.builds
	b.running--
	waiting := b.waiting[r.name]
	delete(b.waiting, r.name)
	// Every waiting turn pinned the agent before it looked it up, so the
	// worker's pin can go before any reply does.
	r.release()
	for _, fn := range waiting {
		fn(r.agent, r.err)
	}
	close(r.handed)
	l.startBuilds()
}

// learnBudget sets the history budget of a loaded session: at once when
// its agent is built, else when a worker has built it (a turn_end recorded
// before then trims nothing; a turn that starts sets it too).
func (l *Loop) learnBudget(s *session) {
	l.withAgent(s.st.Agent, func(a *LoadedAgent, err error) {
		if s.budget == 0 {
			s.budget = historyBudget(a) // the default when the agent cannot be loaded
		}
	})
}
