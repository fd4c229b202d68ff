// Package autonomy owns what agents do on their own, without a person
// writing: the schedules' host (the timer that fires sched.Service's
// schedules into their sessions, and the worker that records how a
// task's turn went), the task boards' host (the timer that starts the
// agents of ready tasks, and the worker that records their outcomes) and
// the heartbeats (one schedule per agent with a heartbeat, its turn in a
// session of its own, and the delivery of what it says).
//
// What it needs from above it declares here as small interfaces: a chat's
// live session (Chats), the running gateways (Gateways), the agents'
// specs (Agents) and the notification path (Notifier). The root satisfies
// them with adapters and hands them over at construction. The runtime's
// loop and the stores it wraps (runtime/sched, runtime/tasks) are below
// it and used directly.
//
// Every host has the root's service shape: Start(ctx) starts its timer,
// Stop(ctx) stops it and waits, at most until ctx's deadline. The two
// hosts whose timers must stop before the turns drain, while their
// workers still record outcomes until the loop stops, also have
// StopTimer.
package autonomy

import (
	"context"
	"sync"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/notify"
)

// Chats finds a chat's live session (lite/chats.Chats.Live): its id and
// its agent; chats.ErrNoChat when the chat has none yet.
type Chats interface {
	Live(ctx context.Context, gateway, chatID string) (sessionID, agent string, err error)
}

// Gateways are the gateways Serve runs: whether one of a name runs, and
// having it deliver a session's new messages to its chat (the App's
// Follow; a session of no gateway needs nothing).
type Gateways interface {
	Running(name string) bool
	Follow(ctx context.Context, gateway, sessionID, chatID string) error
}

// Agents reads the agents' specs: by name (the cache's), and from a
// folder (the heartbeats' look through the agents directory). An agent
// that does not exist is an error matching runtime.ErrAgentNotFound.
type Agents interface {
	Spec(name string) (*agents.Agent, error)
	SpecAt(name, dir string) (*agents.Agent, error)
}

// Notifier is the agents' notification path (*notify.Worker): it never
// blocks.
type Notifier interface {
	Notify(n notify.Notification)
}

// wait waits for wg, at most until ctx ends.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	if ctx.Done() == nil {
		wg.Wait()
		return nil
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
