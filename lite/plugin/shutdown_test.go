package plugin

import (
	"context"
	"log/slog"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stubborn is a plugin process that ignores shutdown and SIGTERM: only
// SIGKILL ends it. Its signals are recorded with the time they came.
type stubborn struct {
	p     *proc
	start time.Time
	got   []string
}

func newStubborn() *stubborn {
	s := &stubborn{start: time.Now()}
	s.p = &proc{name: "stubborn", log: slog.New(slog.DiscardHandler), events: make(chan Event, 4),
		queue: make(chan []byte, 4), exited: make(chan struct{})}
	s.p.sig = func(sig syscall.Signal) {
		s.got = append(s.got, sig.String()+" at "+time.Since(s.start).String())
		if sig == syscall.SIGKILL {
			close(s.p.exited)
			close(s.p.events)
		}
	}
	return s
}

// stoppingGateway is a Gateway as its goroutine has it when Stop begins;
// stopping touches neither the sessions nor the runtime.
func stoppingGateway(grace time.Duration) *Gateway {
	o := Options{Name: "stubborn", Command: "stubborn", Logger: slog.New(slog.DiscardHandler), Observe: func(Status) {}}
	g := &Gateway{o: o, t: Timing{}.withDefaults(), log: o.Logger, hurry: make(chan struct{}), done: make(chan struct{})}
	g.b = newBridge(o, g.t)
	g.grace.Store(int64(grace))
	return g
}

// At Stop a plugin gets shutdown, then SIGTERM after the grace, then
// SIGKILL after another; an acknowledgement it writes meanwhile is still
// handled.
func TestShutdown_EscalatesAfterTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, s := stoppingGateway(5*time.Second), newStubborn()
		g.b.track("r1", "send_message", "c1")
		done := make(chan struct{})
		go func() {
			defer close(done)
			g.shutdown(context.Background(), s.p, s.p.events)
		}()
		synctest.Wait()
		require.Len(t, s.p.queue, 1)
		assert.Equal(t, `{"type":"shutdown"}`+"\n", string(<-s.p.queue))
		s.p.events <- CommandOK{RequestID: "r1"}
		synctest.Wait()
		assert.Empty(t, g.b.requests, "the acknowledgement is handled while the plugin stops")
		<-done
		assert.Equal(t, []string{"terminated at 5s", "killed at 10s"}, s.got)
	})
}

// When Stop's ctx ends first, the plugin is killed at once.
func TestShutdown_HurriedKillsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, s := stoppingGateway(5*time.Second), newStubborn()
		done := make(chan struct{})
		go func() {
			defer close(done)
			g.shutdown(context.Background(), s.p, s.p.events)
		}()
		time.Sleep(time.Second)
		close(g.hurry)
		<-done
		assert.Equal(t, []string{"killed at 1s"}, s.got)
	})
}

// Stop with a deadline shortens the grace so that the flush, shutdown,
// SIGTERM and SIGKILL all fit before it.
func TestStop_GraceFitsTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := stoppingGateway(0)
		g.t.StopGrace = 5 * time.Second
		g.started.Store(true)
		_, g.cancel = context.WithCancel(context.Background())
		close(g.done)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(ctx))
		assert.Equal(t, time.Second, time.Duration(g.grace.Load()))
	})
}
