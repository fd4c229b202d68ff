package upkeep

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
	"github.com/agnx-lite/agnx-lite/storage"
)

// Retention ends idle sessions and moves old events out of the database.
// One timer, not a goroutine: it fires about a minute after Start (the
// daemon calls it once ready) and then hourly; each sweep runs on the
// timer's goroutine, reads the sessions' meta records, ends those idle
// past their ttl (sessions.ttl_hours, spec.session.ttl_hours wins; 0 is
// never) and runs one bounded runtime.Retain pass of each session that may
// have events to remove, as its compaction mode says
// (spec.session.compaction, else sessions.compaction, else archive). Its
// Totals feed /metrics.
type Retention struct {
	st       *storage.Store
	loop     Expirer
	specs    Specs
	sessions config.Sessions
	log      *slog.Logger
	now      func() time.Time
	first    time.Duration // until the first sweep

	mu     sync.Mutex
	timer  *time.Timer
	closed bool
	// ctx is the sweeps', from Start's; cancel ends it at Stop.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// since is when the last sweep started: a session not updated since
	// then has no new events to remove, unless its pass stopped at its
	// bounds (more). Only the sweep goroutine touches them.
	since time.Time
	more  map[string]bool

	expired, pruned, archived atomic.Int64
}

// Sweep timing and bounds.
const (
	retainFirst = time.Minute
	retainEvery = time.Hour
	// maxExpiredPerSweep and maxRetainedPerSweep bound one sweep's work;
	// the rest waits an hour.
	maxExpiredPerSweep  = 200
	maxRetainedPerSweep = 50_000
)

// Expirer is what retention asks of the event loop (runtime.Loop): ending
// a session with reason timeout if nothing happened in it since idleSince,
// checked and done as one step by the loop that owns it. It reports
// whether it ended the session.
type Expirer interface {
	ExpireSession(ctx context.Context, sessionID string, idleSince time.Time) (bool, error)
}

// Specs is what retention asks of the agent cache: an agent's spec as its
// files say, without building it. An error (an agent gone or broken)
// gives its sessions the defaults.
type Specs interface {
	Spec(name string) (*agents.Agent, error)
}

// RetentionOptions are what a Retention sweeps and how.
type RetentionOptions struct {
	// Store holds the sessions' meta records and events.
	Store *storage.Store
	Loop  Expirer
	Specs Specs
	// Sessions are agnx.yaml's defaults for every agent's sessions; an
	// agent's spec.session wins.
	Sessions config.Sessions
	// Logger gets what the sweeps did; nil discards it.
	Logger *slog.Logger
}

// NewRetention returns a Retention whose timer Start arms.
func NewRetention(o RetentionOptions) *Retention {
	r := &Retention{st: o.Store, loop: o.Loop, specs: o.Specs, sessions: o.Sessions, log: o.Logger,
		now: time.Now, first: retainFirst, more: map[string]bool{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Totals are what retention did since the daemon started.
type Totals struct {
	// Expired are the sessions ended by their ttl_hours.
	Expired int64
	// Pruned are the events removed from the database (discarded or
	// archived); Archived those of them moved to the archive files.
	Pruned, Archived int64
}

// Totals reads the counts, from any goroutine.
func (r *Retention) Totals() Totals {
	return Totals{Expired: r.expired.Load(), Pruned: r.pruned.Load(), Archived: r.archived.Load()}
}

// Start arms the timer: the first sweep a minute later, then one an hour
// until Stop or until ctx ends, which also stops a sweep under way at its
// next session. It never fails; a second call, or one after Stop, does
// nothing.
func (r *Retention) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.timer == nil {
		r.ctx, r.cancel = context.WithCancel(ctx)
		r.timer = time.AfterFunc(r.first, r.fire)
	}
	return nil
}

func (r *Retention) fire() {
	r.mu.Lock()
	ctx := r.ctx
	if r.closed || ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	r.Sweep(ctx, r.now())
	r.mu.Lock()
	if !r.closed {
		r.timer.Reset(retainEvery)
	}
	r.mu.Unlock()
}

// Stop stops the timer and waits for a sweep under way, which stops at
// its next session, at most until ctx ends. Calling it again is fine.
func (r *Retention) Stop(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	cancel := r.cancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	// The waiter outlives a ctx that ends first only until the sweep,
	// cancelled above, returns.
	swept := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(swept)
	}()
	select {
	case <-swept:
		return nil
	case <-ctx.Done():
		select {
		case <-swept: // over as ctx ended: stopped all the same
			return nil
		default:
			return fmt.Errorf("stop retention: %w", ctx.Err())
		}
	}
}

// sessionPolicy is what retention does with one agent's sessions.
type sessionPolicy struct {
	ttl    time.Duration // 0: never expire
	mode   string
	memory bool // the agent indexes its sessions for search
}

// policy reads the agent's spec.session over the config's sessions
// defaults. An agent that is gone or broken gets the defaults.
func (r *Retention) policy(name string) sessionPolicy {
	p := sessionPolicy{ttl: time.Duration(r.sessions.TTLHours) * time.Hour, mode: r.sessions.Compaction}
	if spec, err := r.specs.Spec(name); err == nil {
		if s := spec.Session; s.TTLHours != nil {
			p.ttl = time.Duration(*s.TTLHours) * time.Hour
		}
		if spec.Session.Compaction != "" {
			p.mode = spec.Session.Compaction
		}
		p.memory = spec.HasMemory()
	}
	if p.mode == "" {
		p.mode = config.DefaultCompaction
	}
	return p
}

// Sweep does one round as at time now: the timer's work. Run it only
// where no sweep of the timer's can run at once (before Start, or after
// Stop); tests move its clock this way.
func (r *Retention) Sweep(ctx context.Context, now time.Time) {
	list, err := runtime.ListSessions(r.st)
	if err != nil {
		r.log.Error("retention: cannot list the sessions", "err", err)
		return
	}
	policies := map[string]sessionPolicy{}
	firstSweep, since := r.since.IsZero(), r.since
	r.since = now
	var expired, budget = 0, maxRetainedPerSweep
	var pruned, archived int
	for _, info := range list {
		if ctx.Err() != nil {
			return
		}
		p, ok := policies[info.Agent]
		if !ok {
			p = r.policy(info.Agent)
			policies[info.Agent] = p
		}
		if p.ttl > 0 && info.Status == runtime.SessionActive && now.Sub(info.Updated) > p.ttl && expired < maxExpiredPerSweep {
			if r.expire(ctx, info, now.Add(-p.ttl)) {
				expired++
			}
		}
		if budget <= 0 || p.mode == runtime.CompactionDisabled {
			continue
		}
		if !firstSweep && info.Updated.Before(since) && !r.more[info.ID] {
			continue
		}
		res, err := runtime.Retain(r.st, info.ID, r.retainOptions(info, p, budget))
		if err != nil {
			r.log.Error("retention: cannot remove old events", "session", info.ID, "mode", p.mode, "err", err)
			continue
		}
		budget -= res.Pruned
		pruned, archived = pruned+res.Pruned, archived+res.Archived
		if res.More || budget <= 0 {
			r.more[info.ID] = true
		} else {
			delete(r.more, info.ID)
		}
	}
	r.pruned.Add(int64(pruned))
	r.archived.Add(int64(archived))
	if expired > 0 || pruned > 0 {
		r.log.Info("retention swept", "sessions", len(list), "expired", expired, "events_pruned", pruned, "events_archived", archived)
	}
}

// expire ends a session idle since before idleSince, and says so.
func (r *Retention) expire(ctx context.Context, info runtime.SessionInfo, idleSince time.Time) bool {
	ok, err := r.loop.ExpireSession(ctx, info.ID, idleSince)
	if err != nil {
		r.log.Error("retention: cannot end an idle session", "session", info.ID, "err", err)
		return false
	}
	if ok {
		r.expired.Add(1)
		r.log.Info("session expired", "session", info.ID, "agent", info.Agent, "idle_since", info.Updated)
	}
	return ok
}

// retainOptions bounds a session's pass by what the sweep may still do;
// discarding the events of an agent with memory stops at what its index
// has read, so that search never loses a message.
func (r *Retention) retainOptions(info runtime.SessionInfo, p sessionPolicy, budget int) runtime.RetainOptions {
	o := runtime.RetainOptions{Mode: p.mode, MaxEvents: min(5000, budget)}
	if p.memory && p.mode == runtime.CompactionDiscard {
		agent, id := info.Agent, info.ID
		o.Limit = func(tx *storage.Tx) (uint64, error) { return memory.IndexedSeq(tx, agent, id) }
	}
	return o
}
