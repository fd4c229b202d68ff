package runtime

import (
	"context"
	"errors"

	"log/slog"
	"sync"
	"time"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

// LoadedAgent is an agent ready to run: its spec, its provider and its
// tools. The composition root builds and caches it; the loop only reads it.
type LoadedAgent struct {
	Spec     *agents.Agent
	Provider Provider
	Tools    []Tool
	// Policy decides which tool calls run, wait for a user, or are denied;
	// nil allows every call.
	Policy *agents.Policy
	// Hooks are the agent's spec.hooks (see Hooks).
	Hooks Hooks
}

// AgentLoader gives the loop the agents it runs. LoadAgent builds an
// agent when it is not built yet or its files changed, which may take
// seconds (WASM tools compile): the loop calls it only from its build
// workers, never on its own goroutine, so it must be safe for concurrent
// use.
type AgentLoader interface {
	LoadAgent(name string) (*LoadedAgent, error)
}

// AgentCache is an AgentLoader that can tell at once whether an agent is
// built. The loop looks agents up with CachedAgent on its own goroutine
// and hands only a miss to a build worker; an AgentLoader without it goes
// through a worker at every use.
type AgentCache interface {
	AgentLoader
	// CachedAgent returns the agent when it is built and its files did not
	// change since; it never builds and must return quickly.
	CachedAgent(name string) (*LoadedAgent, bool)
}

// AgentPinner is an AgentLoader told which agents have a turn running, so
// that it never evicts them from under a turn. Pin and Unpin are called
// paired, from the loop goroutine and its build workers. A turn pins its
// agent before looking it up or having it built, and a build worker pins
// its agent from before it calls LoadAgent until every waiter has the
// result, so the version a turn gets stays usable (its tools open) until
// the turn ends, whatever is built or evicted meanwhile.
type AgentPinner interface {
	Pin(name string)
	Unpin(name string)
}

// Options configures a Loop. Zero values mean defaults.
type Options struct {
	Store  *storage.Store
	Agents AgentLoader
	// MaxTurns is how many turns run at once; more wait in a queue. A
	// turn waiting for a person's decision holds no slot. Default 2.
	MaxTurns int
	// MaxTools is how many tool calls run at once. Default 4.
	MaxTools int
	// MaxBuilds is how many agents are built at once, by workers off the
	// loop goroutine; more wait their turn. Default 2.
	MaxBuilds int
	// InboxSize bounds the loop's inbox. Default 1024.
	InboxSize int
	// CheckpointEvery is how many events a session gets between
	// checkpoints; a checkpoint is also written at every turn end. Default 50.
	CheckpointEvery int
	// SubscriberBuffer bounds each subscriber's queue. Default 64 (about
	// 18 KiB per subscriber; tokens may fill only half of it).
	SubscriberBuffer int
	// ApprovalTimeout is how long a call waits for a user's decision
	// before it is denied. 0 (the default) means it waits until answered,
	// across restarts and new messages, as in Agnx.
	ApprovalTimeout time.Duration
	// DisconnectGrace is how long after its client left a turn of a pause
	// agent waits for a client to come back (a reconnect resuming the
	// stream) before it pauses. 0 means 5 s; negative pauses at once.
	DisconnectGrace time.Duration
	// IdleAfter is how long a session stays in memory with nothing going
	// on; it is rebuilt from its checkpoint on its next message. Default
	// 10 minutes.
	IdleAfter time.Duration
	// HeldBytes bounds what the sessions in memory hold between turns
	// (their windows, estimated): beyond it the least recently used idle
	// ones leave memory at once (loop_held.go). Default 2 MiB; negative:
	// no bound but IdleAfter.
	HeldBytes int64
	// Observer, when set, is told of turns, tool calls and model calls.
	Observer Observer
	// Notify, when set, is told of the calls an agent's policy asks to be
	// notified of. It is called on the loop goroutine and must not block.
	Notify func(Notification)
	// TurnEnded, when set, is told of every turn's end once it is
	// committed (see TurnEnd): notifications for turns nobody watched. It
	// is called on the loop goroutine and must not block.
	TurnEnded func(TurnEnd)
	// Usage configures the usage ledger and the daily token budget.
	Usage UsageOptions
	// Subagents bounds what the agent tool lets one session delegate.
	Subagents SubagentLimits
	// Policies writes allow_always answers to the agents' policy.local.yaml
	// files, one write at a time. nil: the loop makes its own; loops of one
	// process that serve the same agent folders must share one.
	Policies *agents.LocalPolicies
	Logger   *slog.Logger
	Now      func() time.Time
}

// Loop is the single event loop. One goroutine, Run, owns every session;
// everything else talks to it through its inbox.
type Loop struct {
	opts   Options
	log    *slog.Logger
	inbox  chan request
	done   chan struct{}
	ready  chan struct{}
	runCtx context.Context
	wg     sync.WaitGroup // workers

	sessions map[string]*session
	// owners maps the sessions this loop created, imported or loaded to
	// their agent, principal and parent, for SessionRef: readers off the
	// loop ask it instead of reading each session's record (a page of the
	// file each). None of the three ever changes.
	owners  sync.Map   // session id → SessionRef
	waiting []*session // sessions with a turn to start, in order
	// draining is set by Drain: no new turn starts; drained are told when
	// the last running turn ends.
	draining bool
	drained  []chan struct{}
	// busy refuses new messages while the memory guard sheds load.
	busy bool
	// halted is the storage error that stopped the loop (a damaged
	// database): Run returns it, and calls made after get it. Written on
	// the loop goroutine before done closes, read only after.
	halted error
	// failedTurns are sessions forgotten by a failed commit, with why:
	// their next load ends a turn left active on disk (see loadFailed)
	// instead of running it late.
	failedTurns map[string]error
	running     int // turns in flight
	parking     parking
	tools       toolPool
	turnSeq     uint64
	parser      fastjson.Parser
	builds      agentBuilds
	policy      policyState // allow_always answers (loop_policy.go)
	usage       usageState  // today's token totals (usage.go)
	// waits are the agent-tool waits by the child they wait on
	// (subagent_wait.go).
	waits map[string][]*waiter
	// heldDue is set when a turn ended or a session was loaded: the
	// sessions in memory are fitted to HeldBytes after the next commit
	// (loop_held.go), with heldScratch reused for the pass.
	heldDue     bool
	heldScratch []*session

	// The batch being built for the next group commit.
	ops     []func(*storage.Tx) error
	after   []func(error)
	publish []published
	dirty   map[*session]struct{}
}

// session is a resident session: its folded state plus what only lives
// in memory (the running turn and live subscribers).
type session struct {
	st     *state
	budget int // max_history_tokens of its agent
	turn   *turn
	queued bool // in Loop.waiting
	subs   []*Subscription
	// early are approvals answered before the turn could take them (after
	// a restart); they are handled once it runs (takeEarly).
	early []*approveReq
	// pub is the last durable seq published: committed, and sent to the
	// live subscribers. A new subscriber catches up from the log to here.
	pub     uint64
	sinceCP int
	// used is when the session last did anything; idle ones are dropped
	// from memory by the loop's one sweep timer.
	used time.Time
	// compacting is the compaction under way (loop_compact.go); the
	// session's next turn waits for it.
	compacting *compaction
	// closing is set while its parent closes a child: the end of its turn
	// is no report.
	closing bool
	// lost is the message of the turn a failed commit ended, until the
	// next message (turnlost.go).
	lost *lostTurn
}

type published struct {
	s *session
	e Event
}

// request is anything that arrives in the inbox; handle runs on the loop
// goroutine.
type request interface{ handle(l *Loop) }

// ErrClosed is returned by calls made after the loop stopped.
var ErrClosed = errors.New("agnx-lite is shutting down: try again in a moment")

// ErrSessionNotFound is returned for an unknown session id.
var ErrSessionNotFound = errors.New("session not found")

// ErrAgentNotFound is matched (errors.Is) by an AgentLoader's error for an
// agent that does not exist.
var ErrAgentNotFound = errors.New("agent not found")

// ErrBusy is returned by Send while the memory guard sheds load.
var ErrBusy = errors.New("agnx-lite is busy (memory is short): try again shortly")

// ErrSessionEnded is returned for a message to a session that has ended.
var ErrSessionEnded = errors.New("the session has ended")

// New returns a loop; call Run to start it.
func New(opts Options) *Loop {
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = 2
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = 4
	}
	if opts.MaxBuilds <= 0 {
		opts.MaxBuilds = 2
	}
	if opts.InboxSize <= 0 {
		opts.InboxSize = 1024
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = 50
	}
	if opts.SubscriberBuffer <= 0 {
		opts.SubscriberBuffer = 64
	}
	if opts.IdleAfter <= 0 {
		opts.IdleAfter = 10 * time.Minute
	}
	if opts.HeldBytes == 0 {
		opts.HeldBytes = 2 << 20
	}
	if opts.DisconnectGrace == 0 {
		opts.DisconnectGrace = 5 * time.Second
	}
	if opts.ApprovalTimeout < 0 {
		opts.ApprovalTimeout = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Policies == nil {
		opts.Policies = new(agents.LocalPolicies)
	}
	return &Loop{
		opts:     opts,
		log:      opts.Logger,
		inbox:    make(chan request, opts.InboxSize),
		done:     make(chan struct{}),
		ready:    make(chan struct{}),
		sessions: make(map[string]*session),
		dirty:    make(map[*session]struct{}),
		tools:    toolPool{max: opts.MaxTools},
		builds:   agentBuilds{waiting: make(map[string][]func(*LoadedAgent, error))},

		failedTurns: make(map[string]error),
	}
}

// Run recovers sessions that had a turn in flight, then serves the inbox
// until ctx ends. On return every worker has stopped and everything
// acknowledged is committed; turns still running stay marked active and
// are resumed or marked interrupted by the next Run.
func (l *Loop) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.runCtx = ctx
	defer func() {
		close(l.done)
		cancel()
		l.wg.Wait()
	}()
	if err := l.recover(); err != nil {
		l.halt(err)
		return err
	}
	if l.halted != nil {
		return l.halted
	}
	close(l.ready)
	// One timer for the whole loop, never one per session.
	sweep := time.NewTicker(min(l.opts.IdleAfter/2, time.Minute))
	defer sweep.Stop()
	for {
		select {
		case <-sweep.C:
			l.dropIdle(l.opts.IdleAfter)
			continue
		case <-ctx.Done():
			l.interruptAll()
			l.flush()
			l.closeSubscribers()
			return l.halted
		case r := <-l.inbox:
			r.handle(l)
		}
		l.drain()
		l.flush()
		if l.heldDue {
			l.fitHeld()
		}
		if l.halted != nil {
			l.log.Error("the event loop stops: the database is damaged", "err", l.halted)
			l.closeSubscribers()
			return l.halted
		}
	}
}

// halt stops the loop after the current batch when the store reports
// damage: nothing more can be stored or trusted, and restarting cannot
// fix it.
func (l *Loop) halt(err error) {
	if errors.Is(err, storage.ErrCorrupt) && l.halted == nil {
		l.halted = err
	}
}

// closedErr is what a call gets once the loop stopped.
func (l *Loop) closedErr() error {
	if l.halted != nil {
		return l.halted
	}
	return ErrClosed
}

func (l *Loop) closeSubscribers() {
	for _, s := range l.sessions {
		for _, sub := range s.subs {
			sub.close()
		}
		s.subs = nil
	}
}

// interruptAll ends the running turns of agents whose on_disconnect is
// pause as interrupted, keeping what was streamed; turns of agents that
// continue, and turns waiting for a person or for subagents, stay active
// and are resumed by the next Run.
func (l *Loop) interruptAll() {
	for _, s := range l.sessions {
		if !s.st.TurnActive || s.st.OnDisconnect == agents.OnDisconnectContinue || len(s.st.Approvals) > 0 ||
			s.turn != nil && len(s.turn.waiting) > 0 {
			continue
		}
		if t := s.turn; t != nil && t.partial.Len() > 0 {
			l.record(s, Event{Type: EvAssistant, Agent: s.st.Agent, Content: t.partial.String()})
		}
		l.endTurn(s, TurnInterrupted)
	}
	l.draining = true // nothing new starts while the batch commits
}

// droppable reports whether a session holds nothing but what its
// checkpoint and log give back: no turn, queue, compaction, subscriber or
// uncommitted change.
func (l *Loop) droppable(s *session) bool {
	_, dirty := l.dirty[s]
	return s.turn == nil && !s.st.TurnActive && !s.queued && s.compacting == nil && len(s.subs) == 0 && !dirty
}

// dropIdle forgets the sessions that did nothing for at least idle and are
// droppable. They are rebuilt from their checkpoint when next used.
func (l *Loop) dropIdle(idle time.Duration) int {
	now := l.now()
	n := 0
	for id, s := range l.sessions {
		if !l.droppable(s) || now.Sub(s.used) < idle {
			continue
		}
		delete(l.sessions, id)
		n++
	}
	return n
}

// Ready is closed once Run has recovered interrupted sessions and serves
// the inbox.
func (l *Loop) Ready() <-chan struct{} { return l.ready }

// Done is closed when Run has returned.
func (l *Loop) Done() <-chan struct{} { return l.done }

// drain handles what is already waiting, so one commit covers it all.
func (l *Loop) drain() {
	for range 256 {
		select {
		case r := <-l.inbox:
			r.handle(l)
		default:
			return
		}
	}
}

// post sends a request to the loop; it fails once the loop stopped or ctx
// ends.
func (l *Loop) post(ctx context.Context, r request) error {
	select {
	case l.inbox <- r:
		return nil
	case <-l.done:
		return l.closedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call posts a request and waits for its reply.
func call[T any](ctx context.Context, l *Loop, r request, reply chan result[T]) (T, error) {
	var zero T
	if err := l.post(ctx, r); err != nil {
		return zero, err
	}
	select {
	case res := <-reply:
		return res.v, res.err
	case <-l.done:
		return zero, l.closedErr()
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

type result[T any] struct {
	v   T
	err error
}

func (l *Loop) now() time.Time { return l.opts.Now() }
