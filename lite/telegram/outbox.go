package telegram

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// outbox delivers what the agents say to their chats. One goroutine owns
// it: the watchers (one per session with a reply owed or a turn running,
// none for an idle chat) and the approval keys. Others ask it through do;
// each watcher owns its session's outbox record and makes its own Bot API
// calls, so a slow chat delays no other.
type outbox struct {
	o   *Options
	bot *bot
	// turnEnded is told of each turn a watcher sees end (the chat's
	// queue hands on what waited); set before start.
	turnEnded func(chat int64)
	// waiting counts the chat's messages queued for its next turn; set
	// before start (nil: none are ever queued).
	waiting func(chat int64) int

	reqs     chan func()   // run on the outbox goroutine
	exited   chan *watcher // a watcher's goroutine is returning
	stopping chan struct{} // closed by stop: end once no watcher is left
	done     chan struct{} // closed when the goroutine has returned
	cancel   context.CancelFunc

	// The outbox goroutine's own.
	ctx      context.Context     // the watchers'
	watchers map[string]*watcher // by session id
	live     int                 // watcher goroutines not yet returned
	closing  bool
	keys     approvalKeys
	wg       sync.WaitGroup
}

func newOutbox(o *Options, b *bot) *outbox {
	return &outbox{o: o, bot: b, reqs: make(chan func()), exited: make(chan *watcher),
		stopping: make(chan struct{}), done: make(chan struct{}), watchers: map[string]*watcher{}}
}

// start starts a watcher for every session that still owes its chat
// something (replies finished while the gateway was down, turns resumed
// after a restart, a schedule's message stored before a crash), then
// runs the outbox goroutine. The watchers are started before it returns,
// so what starts after the gateway (the schedules) finds them: a firing
// stored after this is delivered by the firing's Follow, never by the
// recovery racing it.
func (o *outbox) start(ctx context.Context) {
	o.ctx, o.cancel = context.WithCancel(ctx)
	o.recover() // the outbox goroutine does not run yet: nothing else touches the watchers
	go o.run()
}

func (o *outbox) run() {
	defer close(o.done)
	defer o.wg.Wait()
	stopping := o.stopping
	for !o.closing || o.live > 0 {
		select {
		case f := <-o.reqs:
			f()
		case w := <-o.exited:
			o.live--
			if o.watchers[w.sid] == w {
				delete(o.watchers, w.sid)
			}
		case <-stopping:
			stopping, o.closing = nil, true
		}
	}
}

// stop lets the watchers deliver what their turns say until ctx ends,
// then stops the rest (their replies are delivered at the next start),
// and returns once every watcher has returned.
func (o *outbox) stop(ctx context.Context) error {
	close(o.stopping)
	select {
	case <-o.done:
		o.cancel()
		return nil
	case <-ctx.Done():
	}
	o.cancel()
	<-o.done
	return errors.New("telegram: replies were still being delivered when the gateway stopped; they are delivered at the next start")
}

// do runs f on the outbox goroutine and waits for it; false means the
// outbox has stopped.
func (o *outbox) do(f func()) bool {
	ran := make(chan struct{})
	select {
	case o.reqs <- func() { f(); close(ran) }:
		<-ran
		return true
	case <-o.done:
		return false
	}
}

// hold has a watcher follow sid before a message from chat is sent to it,
// so the turn's first tokens stream too, and keeps it until release: the
// message is not committed yet, so the session may look idle. The record
// is written first (see openFrom), on the outbox goroutine, as Follow
// writes it.
func (o *outbox) hold(ctx context.Context, sid string, chat int64) (*watcher, error) {
	var w *watcher
	var err error
	o.do(func() {
		if err = o.openFrom(ctx, sid, chat, false); err != nil {
			return
		}
		if w = o.startWatcher(sid, chat); w != nil {
			w.holds++
		}
	})
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, nil // stopping
	}
	select {
	case <-w.ready:
		return w, nil
	case <-ctx.Done():
		o.release(w, sid, chat, false)
		return nil, ctx.Err()
	}
}

// release ends a hold once the message was sent (or not): the watcher may
// end again. One that ended meanwhile (its session could not be followed)
// is replaced when the message went in.
func (o *outbox) release(w *watcher, sid string, chat int64, sent bool) {
	o.do(func() {
		if w != nil && o.watchers[sid] == w {
			w.holds--
			w.poke()
			return
		}
		if sent {
			o.startWatcher(sid, chat)
		}
	})
}

// startWatcher returns sid's watcher, starting one unless one runs; nil
// when the outbox is stopping. On the outbox goroutine.
func (o *outbox) startWatcher(sid string, chat int64) *watcher {
	if o.closing {
		return nil
	}
	if w := o.watchers[sid]; w != nil {
		return w
	}
	w := &watcher{o: o, bot: o.bot, sid: sid, chat: chat, ready: make(chan struct{}), poked: make(chan struct{}, 1)}
	o.watchers[sid] = w
	o.live++
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		w.run(o.ctx)
		o.exited <- w // the outbox goroutine runs until it has them all
	}()
	return w
}

// mayEnd is asked by a watcher that has delivered everything up to pos:
// it ends unless a message is being sent to its session (hold), or the
// session has a turn running or events after pos. On the outbox
// goroutine, so a message sent before this check keeps the watcher, and
// one sent after it finds no watcher and starts one (from the outbox
// record: nothing is missed).
func (o *outbox) mayEnd(w *watcher, pos uint64) (bool, runtime.SessionInfo) {
	info, err := o.o.Loop.Session(o.ctx, w.sid)
	if w.holds > 0 || (err == nil && (info.Status.InTurn() || info.LastSeq > pos)) {
		return false, info
	}
	if o.watchers[w.sid] == w {
		delete(o.watchers, w.sid)
	}
	return true, info
}

// refs lists the sessions a button press in chat may answer: the chat's
// current one, then any other this gateway follows in that chat.
func (o *outbox) refs(chat int64, callID string) []approvalRef {
	var refs []approvalRef
	if sid, _, err := o.o.Chats.Current(GatewayName, fmt.Sprint(chat)); err == nil {
		refs = append(refs, approvalRef{sid: sid, callID: callID})
	}
	o.do(func() {
		for sid, w := range o.watchers {
			if w.chat == chat && (len(refs) == 0 || refs[0].sid != sid) {
				refs = append(refs, approvalRef{sid: sid, callID: callID})
			}
		}
	})
	return refs
}

// key returns a short key for a call id too long for a button.
func (o *outbox) key(ref approvalRef) (k string, ok bool) {
	ok = o.do(func() { k = o.keys.add(ref) })
	return k, ok
}

// lookup returns the call a short key stands for.
func (o *outbox) lookup(k uint64) (ref approvalRef, found bool) {
	o.do(func() { ref, found = o.keys.m[k] })
	return ref, found
}

// recover starts a watcher for each Telegram session with something to
// deliver or a turn running; each delivers what the outbox still owes,
// follows its turn if one runs, then ends. On the outbox goroutine.
func (o *outbox) recover() {
	list, err := o.o.Loop.Sessions(o.ctx)
	if err != nil {
		o.bot.log.Error("telegram: cannot list sessions to deliver pending replies", "err", err)
		return
	}
	for _, s := range list {
		if s.Gateway != GatewayName || s.Status == runtime.SessionCompleted {
			continue
		}
		r, ok, err := o.readRecord(s.ID)
		if err != nil {
			o.bot.log.Error("telegram: cannot read the outbox", "session", s.ID, "err", err)
			continue
		}
		if !ok {
			// It may still owe what a schedule or a notice said before
			// a crash, before its Follow.
			o.recoverUnseen(s)
			continue
		}
		if r.Delivered >= s.LastSeq && !s.Status.InTurn() {
			continue // nothing owed
		}
		o.startWatcher(s.ID, r.Chat)
	}
}
