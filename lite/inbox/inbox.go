package inbox

import (
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Item is one message waiting in a chat's queue.
type Item struct {
	// Text is what the agent is sent (a group message is already
	// prefixed with its sender's name).
	Text       string
	SenderID   string
	SenderName string
	// Ref is the gateway's own data about the message (what to reply to).
	Ref any
}

// Join makes one message of items: their texts joined by "\n", sent as
// the last item's sender.
func Join(items []Item) Item {
	if len(items) == 1 {
		return items[0]
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	last := items[len(items)-1]
	last.Text = strings.Join(texts, "\n")
	return last
}

// Verdict is what Offer did with a message.
type Verdict int

// The verdicts of Offer.
const (
	// Now: the caller hands the message on at once (the chat is idle,
	// without a debounce window).
	Now Verdict = iota
	// Held: the message waits; Deliver gets it later.
	Held
	// Dropped: the message is dropped (queue.mode drop while a turn runs,
	// or overflow drop_new).
	Dropped
	// Rejected: the queue is full and overflow is reject; the caller
	// tells the sender queue.reject_message, when set.
	Rejected
)

func (v Verdict) String() string { return [...]string{"now", "held", "dropped", "rejected"}[v] }

// Options configure an Inbox.
type Options struct {
	// Busy reports whether the chat's session runs a turn; last is the
	// chat's latest waiting message (its Ref names the session). It is
	// called from the Inbox's timers, never with the Inbox's lock held.
	Busy func(key string, last Item) bool
	// Deliver hands waiting messages on, as one message (Join); called
	// from the Inbox's timers, one call at a time per chat.
	Deliver func(key string, items []Item)
	// Recheck is how often a chat whose messages wait behind a turn looks
	// whether it has ended (default 1 s), in case the gateway, which
	// follows the session, does not Kick it at the turn's end.
	Recheck time.Duration
	// MaxChats bounds the chats with waiting messages (default 4096); a
	// message of another chat beyond it is handed on at once.
	MaxChats int
	// MaxBytes bounds the text waiting in all chats (default 8 MiB); a
	// message beyond it is handed on at once. MaxMerged bounds one
	// merged message (default 64 KiB): beyond it a sender's next message
	// waits apart.
	MaxBytes, MaxMerged int
}

// Inbox holds the waiting messages of a gateway's chats. It is safe for
// concurrent use.
type Inbox struct {
	o     Options
	mu    sync.Mutex
	chats map[string]*chat
	bytes int // text waiting in all chats
}

type chat struct {
	cfg     agents.Queue
	items   []waiting
	timer   *time.Timer
	running bool // a timer callback is handing items on
}

// waiting is an Item in a chat's queue; at is when it last grew.
type waiting struct {
	Item
	at time.Time
}

// New returns an empty Inbox.
func New(o Options) *Inbox {
	if o.Recheck <= 0 {
		o.Recheck = time.Second
	}
	if o.MaxChats <= 0 {
		o.MaxChats = 4096
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8 << 20
	}
	if o.MaxMerged <= 0 {
		o.MaxMerged = 64 << 10
	}
	return &Inbox{o: o, chats: map[string]*chat{}}
}

// Offer puts a message of chat key through its queue cfg; busy says
// whether the chat's session runs a turn now. A message to an idle chat
// with nothing waiting goes on at once (Now: no latency for a single
// message); one that arrives while a turn runs waits for its end (or is
// dropped, in drop mode); with debounce on, a sender's messages within
// window_ms of each other merge into one.
func (q *Inbox) Offer(key string, it Item, cfg agents.Queue, busy bool) Verdict {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.chats[key]
	if c == nil {
		switch {
		case !busy || len(q.chats) >= q.o.MaxChats || q.bytes+len(it.Text) > q.o.MaxBytes:
			return Now // beyond the bounds the runtime queues it for the next turn
		case cfg.Mode == agents.QueueDrop:
			return Dropped
		}
		c = &chat{}
		q.chats[key] = c
		q.arm(key, c)
	}
	c.cfg = cfg
	if busy && cfg.Mode == agents.QueueDrop {
		return Dropped
	}
	if q.bytes+len(it.Text) > q.o.MaxBytes {
		return Dropped // the chat has messages waiting: going on now would pass them
	}
	now := time.Now()
	if n := len(c.items); n > 0 && cfg.Debounce.Enabled {
		last := &c.items[n-1]
		if last.SenderID == it.SenderID && now.Sub(last.at) <= time.Duration(cfg.Debounce.WindowMS)*time.Millisecond &&
			len(last.Text)+1+len(it.Text) <= q.o.MaxMerged {
			q.bytes += 1 + len(it.Text)
			last.Item, last.at = Join([]Item{last.Item, it}), now
			return Held
		}
	}
	before := c.size()
	v := c.add(it, now)
	q.bytes += c.size() - before
	return v
}

// size is the text waiting in the chat.
func (c *chat) size() int {
	n := 0
	for _, w := range c.items {
		n += len(w.Text)
	}
	return n
}

// add appends it within max_pending, per overflow.
func (c *chat) add(it Item, now time.Time) Verdict {
	if max := max(c.cfg.MaxPending, 1); len(c.items) >= max {
		switch c.cfg.Overflow {
		case agents.OverflowDropNew:
			return Dropped
		case agents.OverflowReject:
			return Rejected
		}
		c.items = append(c.items[:0], c.items[len(c.items)-max+1:]...) // drop_old
	}
	c.items = append(c.items, waiting{it, now})
	return Held
}

// Kick says that the turn of chat key has ended, as the gateway following
// its session saw: what waits is looked at now, not at the next recheck.
func (q *Inbox) Kick(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.chats[key]
	if c == nil || c.running || c.timer == nil || !c.timer.Stop() {
		return // nothing waits, or it is being looked at
	}
	c.timer = time.AfterFunc(0, func() { q.fire(key, c) })
}

func (q *Inbox) arm(key string, c *chat) {
	c.timer = time.AfterFunc(q.o.Recheck, func() { q.fire(key, c) })
}

// fire looks whether the chat's turn still runs: then it looks again
// later; else it hands on what waits (all of it joined, or the first one
// when sequential).
func (q *Inbox) fire(key string, c *chat) {
	q.mu.Lock()
	if c.running { // the previous hand-on is not done: keep the order
		q.arm(key, c)
		q.mu.Unlock()
		return
	}
	c.running = true
	var last Item
	if n := len(c.items); n > 0 {
		last = c.items[n-1].Item
	}
	q.mu.Unlock()
	busy := q.o.Busy(key, last)
	q.mu.Lock()
	c.timer, c.running = nil, false
	if busy {
		if len(c.items) > 0 {
			q.arm(key, c)
		} else {
			delete(q.chats, key)
		}
		q.mu.Unlock()
		return
	}
	var take []Item
	n := len(c.items)
	if c.cfg.Mode == agents.QueueSequential {
		n = min(n, 1)
	}
	for _, w := range c.items[:n] {
		take = append(take, w.Item)
		q.bytes -= len(w.Text)
	}
	c.items = c.items[n:]
	c.running = true
	q.mu.Unlock()
	if len(take) > 0 {
		q.o.Deliver(key, take)
	}
	q.mu.Lock()
	c.running = false
	if len(c.items) > 0 {
		if c.timer == nil {
			q.arm(key, c)
		}
	} else if c.timer == nil && q.chats[key] == c {
		delete(q.chats, key)
	}
	q.mu.Unlock()
}

// Waiting reports how many messages of chat key wait.
func (q *Inbox) Waiting(key string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.chats[key]; c != nil {
		return len(c.items)
	}
	return 0
}

// Left is what waited in a chat when Stop was called.
type Left struct {
	Key   string
	Items []Item
}

// Stop stops the timers and returns what waits, for the caller to hand
// on (the runtime keeps it durably for the turn after the running one)
// or to log.
func (q *Inbox) Stop() []Left {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Left
	for k, c := range q.chats {
		if c.timer != nil {
			c.timer.Stop()
		}
		if len(c.items) > 0 {
			items := make([]Item, len(c.items))
			for i, w := range c.items {
				items[i] = w.Item
			}
			out = append(out, Left{k, items})
		}
		delete(q.chats, k)
	}
	q.bytes = 0
	return out
}

// Admission is what a gateway learns of an admitted message: its chat's
// session and agent, what the message does (agents.Disposition) and the
// chat's queue. A Block message has no session (none is created for it).
type Admission struct {
	Session     string
	Agent       string
	Disposition agents.Disposition
	Queue       agents.Queue
}

// Label names a group message's sender as its text's prefix: the display
// name, else the username, else the id.
func Label(displayName, username, id string) string {
	switch {
	case strings.TrimSpace(displayName) != "":
		return strings.TrimSpace(displayName)
	case username != "":
		return username
	}
	return id
}

// Text is what the agent is sent of a message: in a group, prefixed with
// "<label>: ".
func Text(in agents.Inbound, label, text string) string {
	if in.Group() {
		return label + ": " + text
	}
	return text
}
