package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// readDurable reads durable events from sub until it has n of them or the
// subscription closes.
func readDurable(t *testing.T, sub *runtime.Subscription, n int) []runtime.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []runtime.Event
	for len(out) < n {
		select {
		case e, ok := <-sub.C():
			if !ok {
				return out
			}
			if e.Durable() {
				out = append(out, e)
			}
		case <-ctx.Done():
			t.Fatalf("got %d of %d durable events", len(out), n)
		}
	}
	return out
}

// requireLog asserts evs are exactly the log's events after seq after.
func requireLog(t *testing.T, h *harness, sid string, after uint64, evs []runtime.Event) {
	t.Helper()
	want := []uint64{}
	for _, e := range h.durable(sid) {
		if e.Seq > after {
			want = append(want, e.Seq)
		}
	}
	got := make([]uint64, len(evs))
	for i, e := range evs {
		got[i] = e.Seq
	}
	require.Equal(t, want, got, "each event of the log once, in order")
}

func TestFollow_ReplaysTheLogThenGoesLive(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "one")
	h.turn(sid, "use read_file {\"path\":\"notes.txt\"}")

	for _, from := range []uint64{0, 3, runtime.Live} {
		t.Run(fmt.Sprint("after ", from), func(t *testing.T) {
			logged := len(h.durable(sid))
			after := min(from, uint64(logged))
			ctx := context.Background()
			sub, err := h.loop.Follow(ctx, sid, from)
			require.NoError(t, err)
			defer sub.Close()
			replayed := readDurable(t, sub, logged-int(after))
			requireLog(t, h, sid, after, replayed)

			_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "again"})
			require.NoError(t, err)
			live := collect(ctx, t, sub)
			all := append(replayed, find(live, runtime.EvUserMessage)...)
			all = append(all, find(live, runtime.EvAssistant)...)
			all = append(all, find(live, runtime.EvTurnEnd)...)
			requireLog(t, h, sid, after, all)
			assert.Equal(t, "echo: again", tokens(live), "live tokens stream")
		})
	}
}

func TestFollow_LiveStartsAtTheNextEvent(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	h.turn(sid, "one")
	evs := h.turn(sid, "two")
	require.Equal(t, "two", evs[0].Content, "nothing of the first turn")
	require.Equal(t, runtime.EvUserMessage, evs[0].Type)
}

// A reader slower than the session is never dropped: with a queue of two
// events it misses none of a tool turn's, reading them from the log.
func TestFollow_SlowReaderCatchesUpFromTheLog(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.restartWith(func(o *runtime.Options) { o.SubscriberBuffer = 2 })
	sid := h.session()
	ctx := context.Background()
	slow, err := h.loop.Follow(ctx, sid, runtime.Live)
	require.NoError(t, err)
	defer slow.Close()
	for i := range 3 {
		h.turn(sid, fmt.Sprintf("use read_file {\"path\":\"notes.txt\"} %d", i))
	}
	// Three turns of six durable events overflowed a queue of two while
	// nobody read it.
	all := h.durable(sid)
	got := readDurable(t, slow, len(all)-1)
	requireLog(t, h, sid, 1, got)

	// Caught up, it is live again: the next turn comes as it happens.
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: "live"})
	require.NoError(t, err)
	live := readDurable(t, slow, 3)
	assert.Equal(t, []runtime.EventType{runtime.EvUserMessage, runtime.EvAssistant, runtime.EvTurnEnd}, types(live))
	assert.Equal(t, all[len(all)-1].Seq+1, live[0].Seq, "no gap, no duplicate")
}

// FollowQueue sizes one subscription's queue, whatever the loop's default:
// a queue of one loses no durable event of a tool turn either.
func TestFollowQueue_SmallQueueLosesNothing(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	sid := h.session()
	ctx := context.Background()
	slow, err := h.loop.FollowQueue(ctx, sid, runtime.Live, 1)
	require.NoError(t, err)
	defer slow.Close()
	assert.Equal(t, 1, cap(slow.C()))
	for i := range 2 {
		h.turn(sid, fmt.Sprintf("use read_file {\"path\":\"notes.txt\"} %d", i))
	}
	all := h.durable(sid)
	requireLog(t, h, sid, 1, readDurable(t, slow, len(all)-1))
}

// Many readers of every speed, while turns run: each gets the log exactly.
func TestFollow_ReadersOfEverySpeed(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.restartWith(func(o *runtime.Options) { o.SubscriberBuffer = 4 })
	sid := h.session()
	ctx := context.Background()
	const turns = 4
	type got struct {
		after uint64
		evs   []runtime.Event
	}
	results := make(chan got, 6)
	start := make(chan struct{})
	for i := range 6 {
		go func() {
			<-start
			after := uint64(i % 2) // 0 or 1: catch up from the log
			sub, err := h.loop.Follow(ctx, sid, after)
			if !assert.NoError(t, err) {
				results <- got{}
				return
			}
			defer sub.Close()
			var evs []runtime.Event
			ended := 0
			for e := range sub.C() {
				if i%3 == 0 {
					time.Sleep(time.Millisecond) // a slow reader: the queue overflows
				}
				if !e.Durable() {
					continue
				}
				evs = append(evs, e)
				if e.Type == runtime.EvTurnEnd {
					if ended++; ended == turns {
						break
					}
				}
			}
			results <- got{after, evs}
		}()
	}
	close(start)
	for i := range turns {
		h.turn(sid, fmt.Sprintf("use read_file {\"path\":\"notes.txt\"} %d", i))
	}
	for range 6 {
		r := <-results
		requireLog(t, h, sid, r.after, r.evs)
	}
}

func TestFollow_CloseWhileCatchingUp(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.restartWith(func(o *runtime.Options) { o.SubscriberBuffer = 1 })
	sid := h.session()
	for i := range 3 {
		h.turn(sid, fmt.Sprint("turn ", i))
	}
	sub, err := h.loop.Follow(context.Background(), sid, 0)
	require.NoError(t, err)
	first := readDurable(t, sub, 1)
	require.Equal(t, uint64(1), first[0].Seq)
	sub.Close()
	for range sub.C() { // closes, whatever was queued
	}
	require.NoError(t, sub.Err())
	h.close() // the catch-up worker stopped: Run returned
}

func TestFollow_DeletedWhileCatchingUp(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.restartWith(func(o *runtime.Options) { o.SubscriberBuffer = 1 })
	sid := h.session()
	h.turn(sid, "one")
	sub, err := h.loop.Follow(context.Background(), sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, h.loop.DeleteSession(context.Background(), sid))
	for range sub.C() {
	}
	assert.True(t, sub.Deleted())
}

func TestFollow_LoopStopsWhileCatchingUp(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.restartWith(func(o *runtime.Options) { o.SubscriberBuffer = 1 })
	sid := h.session()
	h.turn(sid, "one")
	sub, err := h.loop.Follow(context.Background(), sid, 0)
	require.NoError(t, err)
	h.close()
	for range sub.C() {
	}
	sub.Close() // after the loop: harmless
}

func TestFollow_UnknownSession(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	_, err := h.loop.Follow(context.Background(), "nope", 0)
	require.ErrorIs(t, err, runtime.ErrSessionNotFound)
}

func TestPutKV_SharesTheGroupCommit(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	require.NoError(t, h.loop.PutKV(ctx, "gw/out/x", []byte("7")))
	v, err := h.loop.KV(ctx, "gw/out/x")
	require.NoError(t, err)
	assert.Equal(t, "7", string(v))
	require.NoError(t, h.loop.PutKV(ctx, "gw/out/x", nil))
	v, err = h.loop.KV(ctx, "gw/out/x")
	require.NoError(t, err)
	assert.Nil(t, v)
	h.restart()
	v, err = h.loop.KV(ctx, "gw/out/x")
	require.NoError(t, err)
	assert.Nil(t, v, "the delete was committed")
}

// restartWith restarts the loop with changed options.
func (h *harness) restartWith(change func(*runtime.Options)) {
	h.close()
	change(&h.opts)
	h.start()
}
