// Package inbox is the per-chat queue that gateways (Telegram, plugins)
// put the messages an agent answers through, following
// spec.access.groups.queue (direct messages use agents.DefaultQueue).
//
// A chat's messages wait here while its debounce window is open (rapid
// messages merge into one) and while its session runs a turn; then, per
// queue.mode, they make one next turn joined by "\n" (batch), one turn
// each (sequential), or they are dropped while the turn runs (drop).
// max_pending bounds the waiting messages; beyond it overflow drops the
// oldest (drop_old), the new one (drop_new), or refuses it (reject).
//
// The queue holds no goroutine: an idle chat has no entry, a waiting one
// has one timer (time.AfterFunc) that ends its window or, while a turn
// runs, looks again every Recheck whether it has ended. Like the parent's
// queue it is kept in memory: a crash loses at most the messages waiting
// here (a debounce window, or at most max_pending per chat behind a
// turn); every message the queue hands on is durable from then on.
package inbox
