package lite

import (
	"context"
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
// One timer, not a goroutine: it fires about a minute after the daemon is
// ready and then hourly; each sweep runs on the timer's goroutine, reads
// the sessions' meta records, ends those idle past their ttl
// (sessions.ttl_hours, spec.session.ttl_hours wins; 0 is never) and runs
// one bounded runtime.Retain pass of each session that may have events to
// remove, as its compaction mode says (spec.session.compaction, else
// sessions.compaction, else archive).

// Sweep timing and bounds.
const (
	retainFirst = time.Minute
	retainEvery = time.Hour
	// maxExpiredPerSweep and maxRetainedPerSweep bound one sweep's work;
	// the rest waits an hour.
	maxExpiredPerSweep  = 200
	maxRetainedPerSweep = 50_000
)

// retention is the sweep's state. Its counters feed /metrics.
type retention struct {
	st    *storage.Store
	loop  *runtime.Loop
	cfg   *config.Config
	spec  func(name string) (*agents.Agent, error)
	log   *slog.Logger
	now   func() time.Time
	first time.Duration // until the first sweep

	mu     sync.Mutex
	timer  *time.Timer
	closed bool
	cancel context.CancelFunc
	ctx    context.Context
	wg     sync.WaitGroup
	// since is when the last sweep started: a session not updated since
	// then has no new events to remove, unless its pass stopped at its
	// bounds (more). Only the sweep goroutine touches them.
	since time.Time
	more  map[string]bool

	expired, pruned, archived atomic.Int64
}

func newRetention(a *App, cache *agentCache, log *slog.Logger) *retention {
	ctx, cancel := context.WithCancel(context.Background())
	return &retention{st: a.Store, loop: a.Loop, cfg: a.Config, spec: cache.spec, log: log, now: time.Now,
		first: retainFirst, ctx: ctx, cancel: cancel, more: map[string]bool{}}
}

// start arms the timer (Serve calls it once the daemon is ready).
func (r *retention) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.timer == nil {
		r.timer = time.AfterFunc(r.first, r.fire)
	}
}

func (r *retention) fire() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	r.sweep(r.ctx, r.now())
	r.mu.Lock()
	if !r.closed {
		r.timer.Reset(retainEvery)
	}
	r.mu.Unlock()
}

// close stops the timer and waits for a sweep under way, which stops at
// its next session.
func (r *retention) close() {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// sessionPolicy is what retention does with one agent's sessions.
type sessionPolicy struct {
	ttl    time.Duration // 0: never expire
	mode   string
	memory bool // the agent indexes its sessions for search
}

// policy reads the agent's spec.session over the config's sessions
// defaults. An agent that is gone or broken gets the defaults.
func (r *retention) policy(name string) sessionPolicy {
	p := sessionPolicy{ttl: time.Duration(r.cfg.Sessions.TTLHours) * time.Hour, mode: r.cfg.Sessions.Compaction}
	if spec, err := r.spec(name); err == nil {
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

// sweep does one round at time now.
func (r *retention) sweep(ctx context.Context, now time.Time) {
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
func (r *retention) expire(ctx context.Context, info runtime.SessionInfo, idleSince time.Time) bool {
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
func (r *retention) retainOptions(info runtime.SessionInfo, p sessionPolicy, budget int) runtime.RetainOptions {
	o := runtime.RetainOptions{Mode: p.mode, MaxEvents: min(5000, budget)}
	if p.memory && p.mode == runtime.CompactionDiscard {
		agent, id := info.Agent, info.ID
		o.Limit = func(tx *storage.Tx) (uint64, error) { return memory.IndexedSeq(tx, agent, id) }
	}
	return o
}
