package main

import (
	"context"
	"os"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// localBackend runs the runtime in this process.
type localBackend struct{ app *lite.App }

var _ backend = (*localBackend)(nil)

func (b *localBackend) createSession(ctx context.Context, agent string) (runtime.SessionInfo, error) {
	return b.app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: "cli", Principal: agents.Owner()})
}

func (b *localBackend) session(ctx context.Context, id string) (runtime.SessionInfo, error) {
	return b.app.Loop.Session(ctx, id)
}

func (b *localBackend) sessions(ctx context.Context) ([]runtime.SessionInfo, error) {
	return b.app.Loop.Sessions(ctx)
}

func (b *localBackend) model(_ context.Context, agent string) (modelInfo, error) {
	spec, err := b.app.Agents.Spec(agent)
	if err != nil {
		return modelInfo{}, err
	}
	m := spec.Model
	return modelInfo{m.Provider, m.Name, m.BaseURL}, nil
}

// turn follows the session before sending, so no event of the turn is missed.
func (b *localBackend) turn(ctx context.Context, sid, msg string, p *turnPrinter, interrupt <-chan os.Signal) (outcome, error) {
	sub, err := b.app.Loop.Follow(ctx, sid, runtime.Live)
	if err != nil {
		return outcome{}, err
	}
	defer sub.Close()
	if err := b.post(ctx, sid, msg); err != nil {
		return outcome{}, err
	}
	return p.follow(ctx, sub, interrupt, func() { _ = b.cancel(ctx, sid) })
}

func (b *localBackend) post(ctx context.Context, sid, msg string) error {
	_, err := b.app.Loop.Send(ctx, sid, runtime.Input{Content: msg, SenderID: cliUser()})
	return err
}

// follow passes on the session's events from its first on (Loop.Follow):
// the log, then live ones.
func (b *localBackend) follow(ctx context.Context, sid string, fn func(runtime.Event) error) error {
	sub, err := b.app.Loop.Follow(ctx, sid, 0)
	if err != nil {
		return err
	}
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-sub.C():
			if !ok {
				return followEnded(sub)
			}
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

func (b *localBackend) compact(ctx context.Context, sid string) (runtime.CompactResult, error) {
	return b.app.Loop.Compact(ctx, sid)
}

func (b *localBackend) cancel(ctx context.Context, sid string) error {
	_, err := b.app.Loop.Cancel(ctx, sid)
	return err
}

func (b *localBackend) approve(ctx context.Context, sid, callID, decision string) error {
	return b.app.Loop.Approve(ctx, sid, callID, decision)
}

func (b *localBackend) discard(ctx context.Context, sid string) (bool, error) {
	return b.app.Loop.DiscardUnanswered(ctx, sid)
}

func (b *localBackend) close() error { return b.app.Close() }
