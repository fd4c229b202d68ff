package inbox

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/agents"
)

// rig is an Inbox over a fake session: busy says whether its turn runs,
// delivered collects what was handed on (each delivery joined).
type rig struct {
	mu        sync.Mutex
	busy      bool
	noTurn    bool // deliveries start no turn (several chats share busy)
	delivered []string
	q         *Inbox
}

func newRig() *rig {
	r := &rig{}
	r.q = New(Options{
		Busy: func(string, Item) bool { r.mu.Lock(); defer r.mu.Unlock(); return r.busy },
		Deliver: func(_ string, items []Item) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.delivered = append(r.delivered, Join(items).Text)
			r.busy = !r.noTurn // a delivered message starts a turn
		},
	})
	return r
}

func (r *rig) setBusy(b bool) { r.mu.Lock(); r.busy = b; r.mu.Unlock() }

func (r *rig) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.delivered...)
}

func item(s string) Item { return Item{Text: s} }

func TestOffer_IdleIsNow(t *testing.T) {
	r := newRig()
	assert.Equal(t, Now, r.q.Offer("c", item("a"), agents.DefaultQueue(), false), "no latency for a single message")
	assert.Empty(t, r.q.chats, "an idle chat has no entry")
}

func TestOffer_DebounceMergesASendersRapidMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.setBusy(true)
		cfg := agents.DefaultQueue()
		cfg.Mode = agents.QueueSequential
		ann := func(s string) Item { return Item{Text: s, SenderID: "ann"} }
		assert.Equal(t, Held, r.q.Offer("c", ann("a"), cfg, true))
		time.Sleep(time.Second)
		assert.Equal(t, Held, r.q.Offer("c", ann("b"), cfg, true))
		time.Sleep(1400 * time.Millisecond)
		r.q.Offer("c", ann("c"), cfg, true)
		assert.Equal(t, 1, r.q.Waiting("c"), "each within 1.5 s of the one before: one message")
		time.Sleep(1600 * time.Millisecond)
		r.q.Offer("c", ann("d"), cfg, true)
		r.q.Offer("c", Item{Text: "e", SenderID: "bob"}, cfg, true)
		assert.Equal(t, 3, r.q.Waiting("c"), "a later message and another sender's wait apart")
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"a\nb\nc"}, r.got(), "sequential: the merged message is one turn")

		cfg.Debounce.Enabled = false
		r.q.Offer("d", ann("x"), cfg, true)
		r.q.Offer("d", ann("y"), cfg, true)
		assert.Equal(t, 2, r.q.Waiting("d"), "no debounce: no merging")
	})
}

func TestOffer_BatchWaitsForTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.setBusy(true)
		cfg := agents.DefaultQueue()
		for _, s := range []string{"1", "2", "3"} {
			assert.Equal(t, Held, r.q.Offer("c", item(s), cfg, true))
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Empty(t, r.got(), "the turn still runs")
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"1\n2\n3"}, r.got(), "one next turn, joined by newlines")
	})
}

func TestOffer_SequentialOneTurnEach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.setBusy(true)
		cfg := agents.Queue{Mode: agents.QueueSequential, MaxPending: 10, Overflow: agents.OverflowDropOld}
		r.q.Offer("c", item("1"), cfg, true)
		r.q.Offer("c", item("2"), cfg, true)
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"1"}, r.got(), "the second waits for the first's turn")
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"1", "2"}, r.got())
		assert.Empty(t, r.q.chats)
	})
}

func TestOffer_DropModeDropsDuringTurn(t *testing.T) {
	r := newRig()
	cfg := agents.Queue{Mode: agents.QueueDrop, MaxPending: 10, Overflow: agents.OverflowDropOld}
	assert.Equal(t, Dropped, r.q.Offer("c", item("1"), cfg, true))
	assert.Equal(t, Now, r.q.Offer("c", item("2"), cfg, false))
	assert.Empty(t, r.q.chats)
}

func TestOffer_Overflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.noTurn = true
		r.setBusy(true)
		cfg := agents.Queue{Mode: agents.QueueBatch, MaxPending: 2, Overflow: agents.OverflowDropOld}
		for _, s := range []string{"1", "2", "3"} {
			assert.Equal(t, Held, r.q.Offer("old", item(s), cfg, true))
		}
		cfg.Overflow = agents.OverflowDropNew
		r.q.Offer("new", item("1"), cfg, true)
		r.q.Offer("new", item("2"), cfg, true)
		assert.Equal(t, Dropped, r.q.Offer("new", item("3"), cfg, true))
		cfg.Overflow = agents.OverflowReject
		r.q.Offer("rej", item("1"), cfg, true)
		r.q.Offer("rej", item("2"), cfg, true)
		assert.Equal(t, Rejected, r.q.Offer("rej", item("3"), cfg, true))
		assert.Equal(t, 2, r.q.Waiting("old"))
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.ElementsMatch(t, []string{"2\n3", "1\n2", "1\n2"}, r.got())
	})
}

// A message offered while earlier ones wait keeps its place, even when
// the chat is idle and has no debounce.
func TestOffer_KeepsOrderBehindWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		cfg := agents.DefaultQueue()
		cfg.Debounce.Enabled = false
		r.setBusy(true)
		r.q.Offer("c", item("1"), cfg, true)
		r.setBusy(false)
		assert.Equal(t, Held, r.q.Offer("c", item("2"), cfg, false))
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"1\n2"}, r.got())
	})
}

func TestOffer_MaxChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.setBusy(true)
		r.q.o.MaxChats = 1
		cfg := agents.DefaultQueue()
		assert.Equal(t, Held, r.q.Offer("a", item("1"), cfg, true))
		assert.Equal(t, Now, r.q.Offer("b", item("1"), cfg, true), "beyond MaxChats a message goes on at once")
		assert.Equal(t, []Left{{"a", []Item{item("1")}}}, r.q.Stop())
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Empty(t, r.got(), "Stop stops the timers")
	})
}

func TestJoin(t *testing.T) {
	j := Join([]Item{{Text: "Ann: a", SenderID: "1"}, {Text: "Bob: b", SenderID: "2", Ref: 7}})
	assert.Equal(t, Item{Text: "Ann: a\nBob: b", SenderID: "2", Ref: 7}, j)
	assert.Equal(t, "held", Held.String())
}

func TestOffer_ByteBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.noTurn = true
		r.setBusy(true)
		r.q.o.MaxBytes, r.q.o.MaxMerged = 10, 6
		cfg := agents.DefaultQueue()
		ann := func(s string) Item { return Item{Text: s, SenderID: "ann"} }
		assert.Equal(t, Held, r.q.Offer("c", ann("abc"), cfg, true))
		assert.Equal(t, Held, r.q.Offer("c", ann("de"), cfg, true))
		assert.Equal(t, 1, r.q.Waiting("c"), "merged: abc\nde is 6 bytes")
		assert.Equal(t, Held, r.q.Offer("c", ann("f"), cfg, true))
		assert.Equal(t, 2, r.q.Waiting("c"), "a merge past MaxMerged waits apart")
		assert.Equal(t, 7, r.q.bytes)
		assert.Equal(t, Dropped, r.q.Offer("c", ann("xyzw"), cfg, true), "past MaxBytes, behind waiting messages")
		assert.Equal(t, Now, r.q.Offer("d", ann("xyzw"), cfg, true), "past MaxBytes, another chat goes on at once")
		r.setBusy(false)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"abc\nde\nf"}, r.got())
		assert.Equal(t, 0, r.q.bytes)
	})
}

// The gateway saw the turn end: what waits goes on at once, not at the
// next recheck.
func TestKick_HandsOnAtTheTurnsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig()
		r.setBusy(true)
		assert.Equal(t, Held, r.q.Offer("c", item("a"), agents.DefaultQueue(), true))
		r.q.Kick("c")
		synctest.Wait()
		assert.Empty(t, r.got(), "a kick while the turn still runs hands nothing on")
		r.setBusy(false)
		start := time.Now()
		r.q.Kick("c")
		synctest.Wait()
		assert.Equal(t, []string{"a"}, r.got())
		assert.Zero(t, time.Since(start), "no wait for the recheck")
		r.q.Kick("c") // nothing waits: no-op
		r.q.Kick("other")
		synctest.Wait()
		assert.Len(t, r.got(), 1)
	})
}
