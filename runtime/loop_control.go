package runtime

import (
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// The loop's control surface: draining for shutdown, client disconnects,
// gauges, shedding load, liveness.

// Drain stops new turns from starting (messages are still stored and wait
// for the next start) and returns when no turn is running or ctx ends. A
// graceful shutdown drains with a deadline, then cancels Run.
func (l *Loop) Drain(ctx context.Context) error {
	reply := make(chan result[chan struct{}], 1)
	done, err := call(ctx, l, &drainReq{reply: reply}, reply)
	if err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type drainReq struct{ reply chan result[chan struct{}] }

func (r *drainReq) handle(l *Loop) {
	l.draining = true
	c := make(chan struct{})
	l.drained = append(l.drained, c)
	r.reply <- result[chan struct{}]{v: c}
}

// Disconnect tells the loop that the client that started the session's
// turn went away. When the agent's on_disconnect is pause and nobody
// watches the session once DisconnectGrace has passed (a client resuming
// its stream watches again), the turn stops at its next safe point
// (turn_end paused) and the next message goes on from there; with
// continue, the turn finishes and is stored. A turn waiting for a user's
// decision is left as it is: Agnx's CLI drops its stream on
// approval_required and answers with POST .../approve, which must find the
// turn waiting. It reports whether a pause is on its way.
func (l *Loop) Disconnect(ctx context.Context, sessionID string) (bool, error) {
	reply := make(chan result[bool], 1)
	return call(ctx, l, &disconnectReq{sid: sessionID, reply: reply}, reply)
}

type disconnectReq struct {
	sid   string
	reply chan result[bool]
}

func (r *disconnectReq) handle(l *Loop) {
	s := l.sessions[r.sid]
	pause := s != nil && s.turn != nil && s.st.OnDisconnect != agents.OnDisconnectContinue && len(s.subs) == 0 &&
		len(s.st.Approvals) == 0
	r.reply <- result[bool]{v: pause}
	if !pause {
		return
	}
	if l.opts.DisconnectGrace < 0 {
		s.turn.pause = true
		return
	}
	sid, turnID := r.sid, s.turn.id
	time.AfterFunc(l.opts.DisconnectGrace, func() {
		_ = l.post(context.Background(), &pauseCheck{sid: sid, turn: turnID})
	})
}

// pauseCheck pauses a turn whose client did not come back.
type pauseCheck struct {
	sid  string
	turn uint64
}

func (r *pauseCheck) handle(l *Loop) {
	if s := l.sessions[r.sid]; s != nil && s.turn != nil && s.turn.id == r.turn && len(s.subs) == 0 && len(s.st.Approvals) == 0 {
		s.turn.pause = true
	}
}

// Stats are the loop's gauges, for status pages and metrics.
type Stats struct {
	Resident int    // sessions in memory
	Running  int    // turns running
	Parked   int    // turns waiting for a person's decision, holding no slot
	Waiting  int    // turns queued behind the turn limit
	Inbox    int    // requests waiting in the inbox
	Turns    uint64 // turns started since the loop opened
}

// Stats reads the loop's gauges.
func (l *Loop) Stats(ctx context.Context) (Stats, error) {
	reply := make(chan result[Stats], 1)
	return call(ctx, l, &statsReq{reply: reply}, reply)
}

type statsReq struct{ reply chan result[Stats] }

func (r *statsReq) handle(l *Loop) {
	r.reply <- result[Stats]{v: Stats{Resident: len(l.sessions), Running: l.running,
		Parked: l.parking.parked, Waiting: len(l.waiting), Inbox: len(l.inbox), Turns: l.turnSeq}}
}

// Shed frees what memory the loop can: it drops every idle session now
// (they come back from their checkpoints), and with busy set refuses new
// messages (ErrBusy) until called again with busy false. It reports how
// many sessions it dropped. The memory guard calls it.
func (l *Loop) Shed(ctx context.Context, busy bool) (int, error) {
	reply := make(chan result[int], 1)
	return call(ctx, l, &shedReq{busy: busy, reply: reply}, reply)
}

type shedReq struct {
	busy  bool
	reply chan result[int]
}

func (r *shedReq) handle(l *Loop) {
	l.busy = r.busy
	r.reply <- result[int]{v: l.dropIdle(0)}
}

// Ping returns once the loop has handled a request: a liveness probe that
// goes through the inbox, so a stuck loop does not answer (the systemd
// watchdog uses it).
func (l *Loop) Ping(ctx context.Context) error {
	reply := make(chan result[struct{}], 1)
	_, err := call(ctx, l, &pingReq{reply: reply}, reply)
	return err
}

type pingReq struct{ reply chan result[struct{}] }

func (r *pingReq) handle(*Loop) { r.reply <- result[struct{}]{} }
