package notify

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// DrainTimeout is how long Stop is worth waiting for at shutdown: the
// posts still queued get that long in all, then the rest are dropped.
const DrainTimeout = 5 * time.Second

// Worker delivers notifications: the policies' (Command, from the loop)
// and the agents' own (Notify, TurnEnded: turn ends, processes,
// heartbeats). The log gets them at once; everything else (chat notices,
// webhooks, ntfy) goes through one goroutine with a bounded queue, so a
// slow server drops notifications, never stalls the loop. Its owner stops
// it once the loop, and every other caller, has stopped.
type Worker struct {
	log   *slog.Logger
	queue chan job
	// stop is closed by Stop: the worker runs what is queued until Stop's
	// ctx ends (then cancel cancels the job in flight and the rest are
	// dropped), returns and closes done.
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc
	// allowLoopback lets webhooks reach this host (tests' httptest).
	allowLoopback bool
	// secrets are the values an ntfy token's ${NAME} may name
	// (sandbox.env of agnx.yaml).
	secrets  map[string]string
	gateways *config.Gateways
	agents   Agents
	chats    Chats
	outbox   Outbox
}

// Options are what a Worker is made with; the zero value of each field
// is its default.
type Options struct {
	// Logger gets the log deliveries and what went wrong; nil discards.
	Logger *slog.Logger
	// Env is agnx.yaml's sandbox.env: the only variables an ntfy token's
	// ${NAME} may name, so that an agent cannot send the daemon's other
	// secrets anywhere.
	Env map[string]config.Secret
	// Gateways is agnx.yaml's gateways section, read at each turn's end:
	// a turn in a chat of one of them is delivered by that gateway's own
	// outbox, and needs no notice. nil: no chat gateway.
	Gateways *config.Gateways
	// Agents gives each agent's spec.notify; Notify and TurnEnded need it.
	Agents Agents
	// Chats and Outbox take chat deliveries: the notice goes into the
	// chat's session and its gateway delivers it. Without both, chat
	// deliveries go to the log.
	Chats  Chats
	Outbox Outbox
	// AllowLoopback lets webhooks and ntfy posts reach this host: for
	// tests, whose servers listen there.
	AllowLoopback bool
}

// New makes a worker; notifications queue (up to the queue's bound)
// until Start.
func New(o Options) *Worker {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Worker{log: log, queue: make(chan job, webhookQueue), stop: make(chan struct{}), done: make(chan struct{}),
		allowLoopback: o.AllowLoopback, secrets: offered(o.Env), gateways: o.Gateways,
		agents: o.Agents, chats: o.Chats, outbox: o.Outbox}
}

// Start starts the worker's goroutine; call it once. ctx bounds its life:
// when ctx ends, the delivery in flight is cancelled and what is queued
// is dropped (with a log line each); Stop is the orderly end. It never
// fails.
func (w *Worker) Start(ctx context.Context) error {
	ctx, w.cancel = context.WithCancel(ctx)
	go w.work(ctx)
	return nil
}

// Stop stops the worker and waits for it: what is queued is delivered
// until ctx ends; a delivery still running then is cancelled and the
// rest are dropped (each with a log line), and Stop returns ctx's error.
// Call it once, after every caller has stopped.
func (w *Worker) Stop(ctx context.Context) error {
	if w.cancel == nil {
		return nil // never started
	}
	close(w.stop)
	var err error
	select {
	case <-w.done:
	case <-ctx.Done():
		err = fmt.Errorf("notifications left undelivered at shutdown: %w", context.Cause(ctx))
	}
	w.cancel()
	<-w.done
	return err
}
