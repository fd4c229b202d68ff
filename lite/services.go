package lite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Service is a part of the daemon that runs in the background. Start
// begins it and returns; Stop ends it, waiting at most until ctx's
// deadline. Stop is safe on a service that was never started (Close
// stops every service of the list, Serve starts the later ones only).
type Service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// service is one entry of the App's list.
type service struct {
	name string
	Service
	// serve marks a service that only Serve starts: Open leaves it to
	// it, and a CLI that opens the App in-process never runs it.
	serve   bool
	started bool
}

// services is the App's one ordered list of what runs in the
// background: Open starts its entries in order, Serve then starts the
// ones it adds and those marked serve, and Close stops them all in
// reverse. The order is the whole shutdown story: what a part reports
// to is earlier in the list, so it is still there while the part stops.
type services struct{ list []*service }

// add appends a service; serve marks one that only Serve starts.
func (l *services) add(name string, s Service, serve bool) {
	l.list = append(l.list, &service{name: name, Service: s, serve: serve})
}

// start starts, in order, the services not started yet: those of Open
// when serving is false, all of them when it is true. The first that
// fails stops the starting; the caller stops the list.
func (l *services) start(ctx context.Context, serving bool) error {
	for _, s := range l.list {
		if s.started || s.serve && !serving {
			continue
		}
		if err := s.Start(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		s.started = true
	}
	return nil
}

// stop stops every service in reverse order, each waiting as long as it
// needs, and returns the errors joined.
func (l *services) stop() error {
	var errs []error
	for i := len(l.list) - 1; i >= 0; i-- {
		if err := l.list[i].Stop(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	l.list = nil
	return errors.Join(errs...)
}

// loopService runs the event loop on its own goroutine. Its Stop returns
// why the loop ended when it ended on its own (a damaged database).
type loopService struct {
	loop   *runtime.Loop
	cancel context.CancelFunc
	done   chan error
}

func (s *loopService) Start(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan error, 1)
	go func() { s.done <- s.loop.Run(ctx) }()
	return nil
}

// Stop ends the loop: running turns stay marked active and are resumed
// or marked interrupted at the next start.
func (s *loopService) Stop(context.Context) error {
	if s.done == nil {
		return nil
	}
	s.cancel()
	return <-s.done
}

// bounded gives a service's Stop a deadline of its own (the notification
// worker's drain).
type bounded struct {
	Service
	d time.Duration
}

func (b bounded) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.d)
	defer cancel()
	return b.Service.Stop(ctx)
}

// stopOnly is the stop of a part that starts with its construction (the
// schedules' and task boards' workers): Serve starts its timer.
type stopOnly struct{ Service }

func (stopOnly) Start(context.Context) error { return nil }

// timer is the timer of the schedules or the task boards: Start runs it,
// Stop stops it and leaves the part's worker to stopOnly.
type timer struct {
	t interface {
		Start(ctx context.Context) error
		StopTimer(ctx context.Context) error
	}
}

func (t timer) Start(ctx context.Context) error { return t.t.Start(ctx) }
func (t timer) Stop(ctx context.Context) error  { return t.t.StopTimer(ctx) }

// closer is the stop of a part whose own shape is a Close (the
// background processes): it starts with its construction.
type closer func()

func (closer) Start(context.Context) error  { return nil }
func (c closer) Stop(context.Context) error { c(); return nil }
