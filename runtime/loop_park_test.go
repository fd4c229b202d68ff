package runtime_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// parkHarness is a loop with one turn slot whose agent asks before every
// call.
func parkHarness(t *testing.T, h llmtest.Handler) *harness {
	hs := newHarness(t, h)
	hs.opts.MaxTurns = 1
	hs.restart()
	hs.agent.Policy = askPolicy(t)
	return hs
}

func stats(t *testing.T, h *harness) runtime.Stats {
	t.Helper()
	st, err := h.loop.Stats(context.Background())
	require.NoError(t, err)
	return st
}

// Two turns waiting for a person do not hold the one turn slot: another
// session's message is answered meanwhile, and each waiting turn
// completes once approved.
func TestPark_WaitingForApprovalHoldsNoSlot(t *testing.T) {
	h := parkHarness(t, llmtest.Echo())
	sidA, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	sidB, subB, askB := startAsking(t, h, `use list_dir {}`)
	st := stats(t, h)
	assert.Equal(t, 0, st.Running)
	assert.Equal(t, 2, st.Parked)

	other := h.session()
	evs := h.turn(other, "hello")
	assert.Equal(t, "echo: hello", find(evs, runtime.EvAssistant)[0].Content)

	require.NoError(t, h.loop.Approve(context.Background(), sidA, askA.CallID, runtime.AllowOnce))
	evs = collect(context.Background(), t, subA)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.Equal(t, "read_file said: buy milk", find(evs, runtime.EvAssistant)[0].Content)

	require.NoError(t, h.loop.Approve(context.Background(), sidB, askB.CallID, runtime.DenyCall))
	evs = collect(context.Background(), t, subB)
	assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	assert.Equal(t, "list_dir said: "+runtime.DeniedResult("."), find(evs, runtime.EvAssistant)[0].Content)
	st = stats(t, h)
	assert.Equal(t, runtime.Stats{Resident: st.Resident, Turns: st.Turns}, st, "nothing runs, waits or stays parked")
}

// A parked turn that may go on takes the next free slot before a turn
// that has not started yet.
func TestPark_ResumesAheadOfNewWork(t *testing.T) {
	inB := make(chan struct{})
	releaseB, openB := latch()
	echo := llmtest.Echo()
	h := parkHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "slow" {
			close(inB)
			<-releaseB
		}
		return echo(r)
	})
	t.Cleanup(openB)
	sidA, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)

	sidB := h.session()
	subB, err := h.loop.Subscribe(context.Background(), sidB)
	require.NoError(t, err)
	_, err = h.loop.Send(context.Background(), sidB, runtime.Input{Content: "slow"})
	require.NoError(t, err)
	select { // B holds the only slot
	case <-inB:
	case <-time.After(10 * time.Second):
		t.Fatal("B never started: A holds the slot")
	}

	require.NoError(t, h.loop.Approve(context.Background(), sidA, askA.CallID, runtime.AllowOnce))
	sidC := h.session()
	subC, err := h.loop.Subscribe(context.Background(), sidC)
	require.NoError(t, err)
	_, err = h.loop.Send(context.Background(), sidC, runtime.Input{Content: "newer"})
	require.NoError(t, err)
	st := stats(t, h)
	assert.Equal(t, 1, st.Running)
	assert.Equal(t, 1, st.Parked, "A waits for a slot")
	assert.Equal(t, 1, st.Waiting, "C waits for a slot")

	openB()
	collect(context.Background(), t, subB)
	collect(context.Background(), t, subA)
	collect(context.Background(), t, subC)
	var order []string
	for _, r := range h.fake.Requests() {
		order = append(order, r.Last().Role+":"+r.LastUser())
	}
	assert.Equal(t, []string{
		`user:use read_file {"path":"notes.txt"}`,
		"user:slow",
		`tool:use read_file {"path":"notes.txt"}`, // A goes on first
		"user:newer",
	}, order)
}

// Parked turns survive a restart: they are resumed (resumeCalls) and park
// again without holding the slot, and approving them after it completes
// them.
func TestPark_AcrossRestart(t *testing.T) {
	h := parkHarness(t, llmtest.Echo())
	sidA, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	sidB, subB, askB := startAsking(t, h, `use list_dir {}`)
	subA.Close()
	subB.Close()
	h.restart()

	other := h.session()
	evs := h.turn(other, "hello")
	assert.Equal(t, "echo: hello", find(evs, runtime.EvAssistant)[0].Content)
	assert.Equal(t, 2, stats(t, h).Parked)

	for _, a := range []struct {
		sid, call string
		want      string
	}{{sidA, askA.CallID, "read_file said: buy milk"}, {sidB, askB.CallID, "list_dir said: notes.txt"}} {
		sub, err := h.loop.Subscribe(context.Background(), a.sid)
		require.NoError(t, err)
		require.NoError(t, h.loop.Approve(context.Background(), a.sid, a.call, runtime.AllowOnce))
		evs = collect(context.Background(), t, sub)
		sub.Close()
		assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
		assert.Contains(t, find(evs, runtime.EvAssistant)[0].Content, a.want)
	}
	assert.Zero(t, stats(t, h).Parked)
}

// pipeNet is an in-memory network for a synctest bubble: connections are
// net.Pipe ends, so a goroutine waiting on one is durably blocked and the
// bubble's clock can move.
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeNet() *pipeNet { return &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})} }

func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeNet) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

func (p *pipeNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// An approval nobody answers is denied when ApprovalTimeout passes, even
// for parked turns; each then takes the one slot in turn and completes.
// The clock is synctest's: five minutes pass at once.
func TestPark_ApprovalTimeout(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo()) // its handler is served in the bubble
	synctest.Test(t, func(t *testing.T) {
		pn := newPipeNet()
		srv := &http.Server{Handler: fake.Config.Handler}
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = srv.Serve(pn)
		}()
		tr := &http.Transport{DialContext: pn.dial}
		t.Cleanup(func() { // after the loop stopped
			tr.CloseIdleConnections()
			_ = srv.Close()
			<-served
		})
		h := newHarnessClient(t, fake, &http.Client{Transport: tr})
		h.opts.MaxTurns = 1
		h.opts.ApprovalTimeout = 5 * time.Minute
		h.restart()
		h.agent.Policy = askPolicy(t)

		_, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
		_, subB, askB := startAsking(t, h, `use list_dir {}`)
		evs := h.turn(h.session(), "hello")
		assert.Equal(t, "echo: hello", find(evs, runtime.EvAssistant)[0].Content, "answered while both wait")

		for _, w := range []struct {
			sub *runtime.Subscription
			ask runtime.Event
		}{{subA, askA}, {subB, askB}} {
			evs := collect(context.Background(), t, w.sub)
			dec := find(evs, runtime.EvApprovalDecision)
			require.Len(t, dec, 1)
			assert.Equal(t, "timeout", dec[0].Reason)
			assert.Equal(t, 5*time.Minute, dec[0].Time.Sub(w.ask.Time), "denied when the timeout passed")
			assert.Contains(t, find(evs, runtime.EvToolResult)[0].Content, "nobody answered")
			assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
		}
		assert.Zero(t, stats(t, h).Parked)
	})
}

// A parked turn cancelled while it waits for a slot gives up its place:
// nothing of it runs, and the slot goes to the next turn.
func TestPark_CancelledWhileWaitingForASlot(t *testing.T) {
	inB := make(chan struct{})
	releaseB, openB := latch()
	echo := llmtest.Echo()
	h := parkHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "slow" {
			close(inB)
			<-releaseB
		}
		return echo(r)
	})
	t.Cleanup(openB)
	sidA, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	sidB := h.session()
	subB, err := h.loop.Subscribe(context.Background(), sidB)
	require.NoError(t, err)
	_, err = h.loop.Send(context.Background(), sidB, runtime.Input{Content: "slow"})
	require.NoError(t, err)
	select {
	case <-inB:
	case <-time.After(10 * time.Second):
		t.Fatal("B never started")
	}
	require.NoError(t, h.loop.Approve(context.Background(), sidA, askA.CallID, runtime.AllowOnce))
	cancelled, err := h.loop.Cancel(context.Background(), sidA)
	require.NoError(t, err)
	assert.True(t, cancelled)
	evs := collect(context.Background(), t, subA)
	assert.Equal(t, runtime.TurnCancelled, evs[len(evs)-1].Reason)
	assert.Empty(t, find(evs, runtime.EvToolResult), "the allowed call never ran")
	assert.Equal(t, 0, stats(t, h).Parked)

	openB()
	collect(context.Background(), t, subB)
	evs = h.turn(h.session(), "next")
	assert.Equal(t, "echo: next", find(evs, runtime.EvAssistant)[0].Content)
	st := stats(t, h)
	assert.Equal(t, runtime.Stats{Resident: st.Resident, Turns: st.Turns}, st)
}
