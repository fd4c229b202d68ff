package main

import (
	"context"
	"errors"
	"os"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// httpBackend talks to the running daemon.
type httpBackend struct {
	c   *httpapi.Client
	url string
}

var _ backend = (*httpBackend)(nil)

func (b *httpBackend) createSession(ctx context.Context, agent string) (runtime.SessionInfo, error) {
	return b.c.CreateSession(ctx, agent)
}

func (b *httpBackend) session(ctx context.Context, id string) (runtime.SessionInfo, error) {
	return b.c.Session(ctx, id)
}

func (b *httpBackend) sessions(ctx context.Context) ([]runtime.SessionInfo, error) {
	return b.c.Sessions(ctx)
}

func (b *httpBackend) model(ctx context.Context, agent string) (modelInfo, error) {
	a, err := b.c.Agent(ctx, agent)
	return modelInfo{a.Spec.Model.Provider, a.Spec.Model.Name, a.Spec.Model.BaseURL}, err
}

// turn streams the turn; Ctrl-C asks the daemon to cancel it, and the
// stream then ends with the cancelled turn_end.
func (b *httpBackend) turn(ctx context.Context, sid, msg string, p *turnPrinter, interrupt <-chan os.Signal) (outcome, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-interrupt:
				_ = b.cancel(ctx, sid)
			}
		}
	}()
	var last outcome
	ended := false
	err := b.c.Stream(ctx, sid, msg, func(e runtime.Event) error {
		ended = p.event(&e, &last) || ended
		return nil
	})
	switch {
	case ended:
		return last, nil
	case last.err != "":
		return last, errors.New(last.err)
	case err == nil:
		return last, errors.New("the daemon ended the stream before the turn ended")
	}
	return last, err
}

func (b *httpBackend) post(ctx context.Context, sid, msg string) error {
	return b.c.Stream(ctx, sid, msg, func(runtime.Event) error { return nil })
}

func (b *httpBackend) follow(ctx context.Context, sid string, fn func(runtime.Event) error) error {
	return b.c.Events(ctx, sid, 0, false, fn)
}

func (b *httpBackend) compact(ctx context.Context, sid string) (runtime.CompactResult, error) {
	r, err := b.c.Compact(ctx, sid)
	return runtime.CompactResult{Method: r.Method, TokensBefore: r.TokensBefore, TokensAfter: r.TokensAfter, CoversTo: r.CoversTo}, err
}

func (b *httpBackend) cancel(ctx context.Context, sid string) error {
	_, err := b.c.Cancel(ctx, sid)
	return err
}

// approve answers a call without waiting for the turn: what it does next
// comes on the turn's stream, which asked for lite's events and stays
// open past approval_required.
func (b *httpBackend) approve(ctx context.Context, sid, callID, decision string) error {
	return b.c.Answer(ctx, sid, callID, decision)
}

// discard asks the daemon to remove the session when nothing in it came
// from a model (POST …/discard: the check and the removal in one step).
// The CLI calls it only for sessions it started itself.
func (b *httpBackend) discard(ctx context.Context, sid string) (bool, error) {
	return b.c.DiscardUnanswered(ctx, sid)
}

func (b *httpBackend) close() error { return nil }
