package autonomy

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/lite/chats"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

var _ sched.Firer = (*Schedules)(nil)

// Fire runs a due schedule (sched.Firer): it stores the run's message (a
// notice, or a task's user message that starts a turn) in its
// destination's session with f.Record, in the same transaction, and asks
// the destination's gateway to deliver the session. Once the message is
// stored the run is done: a gateway that cannot deliver now delivers it
// from its outbox at its next start.
func (s *Schedules) Fire(ctx context.Context, f sched.Firing) error {
	err := s.fire(ctx, f)
	var skip *sched.SkipError
	switch {
	case errors.As(err, &skip): // the service counts its skips
	case err != nil:
		s.fireErrors.Add(1)
	default:
		s.fired.Add(1)
	}
	return err
}

func (s *Schedules) fire(ctx context.Context, f sched.Firing) error {
	sc := &f.Schedule
	if sc.Payload.Kind == sched.KindHeartbeat {
		if s.hb == nil {
			return errors.New("heartbeats do not run in this process")
		}
		return s.hb.fire(ctx, f) // its own session, delivered by heartbeat_turn.go
	}
	if sc.Payload.StartsTurn() {
		if err := budgetSkip(ctx, s.loop, sc.Agent); err != nil {
			return err
		}
	}
	t, err := s.target(ctx, sc.Destination)
	if err != nil {
		return err
	}
	f.SetSession(t.sid)
	origin, record := sched.Origin(sc.ID), f.Record
	if s.inCommit != nil {
		record = func(tx *storage.Tx) error { s.inCommit(); return f.Record(tx) }
	}
	switch sc.Payload.Kind {
	case sched.KindMessage:
		_, err = s.loop.Notice(ctx, t.sid, runtime.Notice{Content: sc.Payload.Text, Origin: origin, Commit: record})
	case sched.KindTask:
		_, err = s.loop.Send(ctx, t.sid, runtime.Input{Content: sched.TaskMessage(sc.Payload.Text), Origin: origin, Commit: record})
	default:
		return fmt.Errorf("the schedule's payload kind %q is unknown: cancel it and create it again", sc.Payload.Kind)
	}
	if err != nil {
		return fmt.Errorf("store the schedule's message in session %s: %w", t.sid, err)
	}
	if s.stored != nil {
		s.stored()
	}
	if err := s.gateways.Follow(ctx, t.gateway, t.sid, t.chat); err != nil {
		s.log.Warn("the schedule's message is stored but its gateway cannot deliver it now; it is delivered when the gateway next starts",
			"schedule", sc.ID, "session", t.sid, "err", err)
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
func (s *Schedules) target(ctx context.Context, d sched.Destination) (schedTarget, error) {
	if d.Gateway != "" && d.ChatID != "" {
		sid, _, err := s.chats.Live(ctx, d.Gateway, d.ChatID)
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
	info, err := s.loop.Session(ctx, d.SessionID)
	if err != nil {
		return schedTarget{}, fmt.Errorf("the schedule's session %s cannot be read (%w): cancel the schedule if the session was deleted", d.SessionID, err)
	}
	t := schedTarget{sid: info.ID}
	if s.gateways.Running(info.Gateway) && info.ChatID != "" {
		t.gateway, t.chat = info.Gateway, info.ChatID // a gateway's session: its chat shows it
	}
	return t, nil
}
