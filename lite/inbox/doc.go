// Package inbox is the per-chat queue that gateways (Telegram, plugins)
// put the messages an agent answers through, following
// spec.access.groups.queue (direct messages use agents.DefaultQueue).
//
// A message to an idle chat goes on at once, as in the parent (no
// latency for a single message). Messages that arrive while the chat's
// session runs a turn wait here (a sender's messages within the debounce
// window merge into one); when the turn ends, per queue.mode, they make
// one next turn joined by "\n" (batch) or one turn each (sequential);
// in drop mode they are dropped.
// max_pending bounds the waiting messages; beyond it overflow drops the
// oldest (drop_old), the new one (drop_new), or refuses it (reject).
//
// The queue holds no goroutine: an idle chat has no entry, a waiting one
// has one timer (time.AfterFunc) that looks every Recheck whether the
// turn has ended. Like the parent's queue it is kept in memory: a crash
// loses at most the messages waiting here (max_pending per chat, behind a
// running turn, 8 MiB of text in all); at a clean stop the gateways hand
// what waits to the runtime, which keeps it for the next turn. Every
// message the queue hands on is durable from then on, and so is every
// message that goes on at once.
package inbox
