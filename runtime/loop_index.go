package runtime

import (
	"context"

	"github.com/agnx-lite/agnx-lite/storage"
)

// View reads a consistent snapshot of the store. Like the other reads it
// does not go through the inbox: bbolt readers never block the writer.
func (l *Loop) View(fn func(*storage.Tx) error) error { return l.opts.Store.View(fn) }

// Commit runs fn inside the loop's next group commit, sharing its fsync
// with the events being committed, and returns once fn's writes are
// durable (or with the commit's error). fn runs on the loop goroutine
// inside the write transaction, so it must only put and delete bytes
// computed before the call, never read files or wait; it may run twice
// (a commit that found the disk full retries once), so it must not count
// on state of its own. An error fn returns fails the whole batch, other
// sessions' events with it: return only what the Tx returned.
func (l *Loop) Commit(ctx context.Context, fn func(*storage.Tx) error) error {
	reply := make(chan result[struct{}], 1)
	_, err := call(ctx, l, &commitReq{fn: fn, reply: reply}, reply)
	return err
}

type commitReq struct {
	fn    func(*storage.Tx) error
	reply chan result[struct{}]
}

func (r *commitReq) handle(l *Loop) {
	l.ops = append(l.ops, r.fn)
	l.afterCommit(func(err error) { r.reply <- result[struct{}]{err: err} })
}
