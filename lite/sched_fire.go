package lite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// schedFirer runs a due schedule: it stores the schedule's message in its
// destination's session with the run's record in the same transaction,
// then has the gateway deliver it.
type schedFirer struct {
	a    *App
	host *schedHost
	// Test seams (nil in the daemon): inCommit runs in the transaction
	// that stores the message and records the run, before the record;
	// stored once it is committed, before the gateway is asked.
	inCommit func()
	stored   func()
}

var _ sched.Firer = (*schedFirer)(nil)

// Fire stores the run's message (a notice, or a task's user message that
// starts a turn) with f.Record and asks the destination's gateway to
// deliver the session. Once the message is stored the run is done: a
// gateway that cannot deliver now delivers it from its outbox at its next
// start.
func (fr *schedFirer) Fire(ctx context.Context, f sched.Firing) error {
	err := fr.fire(ctx, f)
	var skip *sched.SkipError
	switch {
	case errors.As(err, &skip): // the service counts its skips
	case err != nil:
		fr.host.fireErrors.Add(1)
	default:
		fr.host.fired.Add(1)
	}
	return err
}

func (fr *schedFirer) fire(ctx context.Context, f sched.Firing) error {
	s := &f.Schedule
	if s.Payload.Kind == sched.KindHeartbeat {
		return fr.a.heartbeatFire(ctx, f) // its own session, delivered by heartbeat.go
	}
	if s.Payload.StartsTurn() {
		if err := budgetSkip(ctx, fr.a.Loop, s.Agent); err != nil {
			return err
		}
	}
	t, err := fr.target(ctx, s.Destination)
	if err != nil {
		return err
	}
	f.SetSession(t.sid)
	origin, record := sched.Origin(s.ID), f.Record
	if fr.inCommit != nil {
		record = func(tx *storage.Tx) error { fr.inCommit(); return f.Record(tx) }
	}
	switch s.Payload.Kind {
	case sched.KindMessage:
		_, err = fr.a.Loop.Notice(ctx, t.sid, runtime.Notice{Content: s.Payload.Text, Origin: origin, Commit: record})
	case sched.KindTask:
		_, err = fr.a.Loop.Send(ctx, t.sid, runtime.Input{Content: sched.TaskMessage(s.Payload.Text), Origin: origin, Commit: record})
	default:
		return fmt.Errorf("the schedule's payload kind %q is unknown: cancel it and create it again", s.Payload.Kind)
	}
	if err != nil {
		return fmt.Errorf("store the schedule's message in session %s: %w", t.sid, err)
	}
	if fr.stored != nil {
		fr.stored()
	}
	if err := fr.a.Follow(ctx, t.gateway, t.sid, t.chat); err != nil {
		fr.a.log.Warn("the schedule's message is stored but its gateway cannot deliver it now; it is delivered when the gateway next starts",
			"schedule", s.ID, "session", t.sid, "err", err)
	}
	return nil
}

// budgetSkip skips a run that would start a turn of an agent that used
// its daily token budget: the run is recorded skipped with the budget's
// sentence, and nothing is stored (the loop would refuse the turn, and a
// chat would get the refusal at every run). When the budget cannot be
// asked (an agent that does not build, a stop) the run goes on: its turn's
// start checks the budget again, and fails as it always did.
func budgetSkip(ctx context.Context, loop *runtime.Loop, agent string) error {
	why, err := loop.BudgetRefusal(ctx, agent)
	if err == nil && why != "" {
		return &sched.SkipError{Code: runtime.CodeTokenBudget, Reason: why}
	}
	return nil
}

// schedTarget is the session a run's message goes to and the chat that
// shows it ("" gateway: a session clients read through the API).
type schedTarget struct{ sid, gateway, chat string }

// target resolves a destination: a gateway's chat goes to the chat's
// current session (after /new, the new one); a session id to that session,
// delivered to its chat when a running gateway serves it (an HTTP or CLI
// session's clients read it themselves).
func (fr *schedFirer) target(ctx context.Context, d sched.Destination) (schedTarget, error) {
	if d.Gateway != "" && d.ChatID != "" {
		sid, _, err := fr.a.Chats().Live(ctx, d.Gateway, d.ChatID)
		if errors.Is(err, chats.ErrNoChat) {
			return schedTarget{}, fmt.Errorf("the chat %s of %s has no session: write to the bot there once, or cancel the schedule", d.ChatID, d.Gateway)
		}
		if err != nil {
			return schedTarget{}, fmt.Errorf("find the session of chat %s of %s: %w", d.ChatID, d.Gateway, err)
		}
		return schedTarget{sid: sid, gateway: d.Gateway, chat: d.ChatID}, nil
	}
	if d.SessionID == "" {
		return schedTarget{}, errors.New("the schedule has no destination (a chat or a session): cancel it and create it again from a chat")
	}
	info, err := fr.a.Loop.Session(ctx, d.SessionID)
	if err != nil {
		return schedTarget{}, fmt.Errorf("the schedule's session %s cannot be read (%w): cancel the schedule if the session was deleted", d.SessionID, err)
	}
	t := schedTarget{sid: info.ID}
	if _, ok := fr.a.Gateway(info.Gateway); ok && info.ChatID != "" {
		t.gateway, t.chat = info.Gateway, info.ChatID // a gateway's session: its chat shows it
	}
	return t, nil
}
