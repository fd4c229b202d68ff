package acpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Backend is what the server needs of agnx-lite. Its errors are one
// sentence for the user.
type Backend interface {
	// CreateSession starts a session with agent, for gateway "acp".
	CreateSession(ctx context.Context, agent string) (runtime.SessionInfo, error)
	Session(ctx context.Context, id string) (runtime.SessionInfo, error)
	// Turn sends msg to the session and calls fn with each event of the
	// turn it starts, its turn_end last; an error from fn stops it.
	Turn(ctx context.Context, sid, msg string, fn func(runtime.Event) error) error
	// History calls fn with each stored event of the session, in order.
	History(ctx context.Context, sid string, fn func(runtime.Event) error) error
	Cancel(ctx context.Context, sid string) error
	// Approve answers a call waiting for a decision (runtime.AllowOnce,
	// AllowAlways or DenyCall).
	Approve(ctx context.Context, sid, callID, decision string) error
}

// Gateway is the gateway of the sessions the server creates.
const Gateway = "acp"

// Local is a Backend over a runtime.Loop in this process.
type Local struct {
	Loop *runtime.Loop
	// SenderID is the sender_id of the prompts ("acp" when empty).
	SenderID string
}

var _ Backend = (*Local)(nil)

func (b *Local) CreateSession(ctx context.Context, agent string) (runtime.SessionInfo, error) {
	return b.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: Gateway, Principal: agents.Owner()})
}

func (b *Local) Session(ctx context.Context, id string) (runtime.SessionInfo, error) {
	return b.Loop.Session(ctx, id)
}

// Turn follows the session before sending, so no event of the turn is
// missed; a message queued behind another client's turn skips that
// turn's events.
func (b *Local) Turn(ctx context.Context, sid, msg string, fn func(runtime.Event) error) error {
	sub, err := b.Loop.Follow(ctx, sid, runtime.Live)
	if err != nil {
		return err
	}
	defer sub.Close()
	sender := b.SenderID
	if sender == "" {
		sender = Gateway
	}
	sent, err := b.Loop.Send(ctx, sid, runtime.Input{Content: msg, SenderID: sender})
	if err != nil {
		return err
	}
	skipping := sent.Queued
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-sub.C():
			if !ok {
				return subEnded(sub)
			}
			if e.Seq != 0 && e.Seq <= sent.Seq {
				continue // the message itself, and what came before it
			}
			if skipping {
				skipping = e.Type != runtime.EvTurnEnd
				continue
			}
			if err := fn(e); err != nil {
				return err
			}
			if e.Type == runtime.EvTurnEnd {
				return nil
			}
		}
	}
}

func subEnded(sub *runtime.Subscription) error {
	switch {
	case sub.Err() != nil:
		return sub.Err()
	case sub.Deleted():
		return errors.New("the session was deleted: start a new one")
	}
	return errors.New("the runtime stopped before the turn ended: load the session again once it is back")
}

// historyPage bounds the events read in one read transaction: fn writes
// to the client, which may be slow, so no transaction stays open on it.
const historyPage = 64

var errPageFull = errors.New("page full")

func (b *Local) History(ctx context.Context, sid string, fn func(runtime.Event) error) error {
	if _, err := b.Loop.Session(ctx, sid); err != nil {
		return err
	}
	page := make([]runtime.Event, 0, historyPage)
	var after uint64
	for {
		page = page[:0]
		err := b.Loop.Events(ctx, sid, after, func(e runtime.Event) error {
			page = append(page, e)
			if len(page) == historyPage {
				return errPageFull
			}
			return nil
		})
		if err != nil && err != errPageFull {
			return fmt.Errorf("read session %s: %w", sid, err)
		}
		for i := range page {
			if err := fn(page[i]); err != nil {
				return err
			}
			after = page[i].Seq
		}
		if len(page) < historyPage || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func (b *Local) Cancel(ctx context.Context, sid string) error {
	_, err := b.Loop.Cancel(ctx, sid)
	return err
}

func (b *Local) Approve(ctx context.Context, sid, callID, decision string) error {
	return b.Loop.Approve(ctx, sid, callID, decision)
}

// HTTP is a Backend over a running daemon. Its Client should be made
// with ClientOptions.Gateway "acp".
type HTTP struct{ Client *httpapi.Client }

var _ Backend = (*HTTP)(nil)

func (b *HTTP) CreateSession(ctx context.Context, agent string) (runtime.SessionInfo, error) {
	return b.Client.CreateSession(ctx, agent)
}

func (b *HTTP) Session(ctx context.Context, id string) (runtime.SessionInfo, error) {
	return b.Client.Session(ctx, id)
}

// Turn streams the turn (POST …/stream), which ends after its turn_end.
func (b *HTTP) Turn(ctx context.Context, sid, msg string, fn func(runtime.Event) error) error {
	ended := false
	err := b.Client.Stream(ctx, sid, msg, func(e runtime.Event) error {
		if e.Type == runtime.EvUserMessage || ended {
			return nil
		}
		ended = e.Type == runtime.EvTurnEnd
		return fn(e)
	})
	if err == nil && !ended {
		return errors.New("the daemon ended the stream before the turn ended: load the session again to see the rest")
	}
	return err
}

func (b *HTTP) History(ctx context.Context, sid string, fn func(runtime.Event) error) error {
	return b.Client.Export(ctx, sid, fn)
}

func (b *HTTP) Cancel(ctx context.Context, sid string) error {
	_, err := b.Client.Cancel(ctx, sid)
	return err
}

// Approve answers without waiting for the turn: the rest comes on the
// turn's stream.
func (b *HTTP) Approve(ctx context.Context, sid, callID, decision string) error {
	return b.Client.Answer(ctx, sid, callID, decision)
}
