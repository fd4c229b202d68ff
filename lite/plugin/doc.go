// Package plugin runs gateway plugins: child processes that connect a chat
// platform to agnx-lite by speaking the v1alpha1 gateway protocol of Agnx,
// one JSON object per line over their stdin (commands from the core) and
// stdout (events from the gateway). Their stderr goes to the log.
//
// It owns three things: the protocol (the message types, [Encode] and
// [Parse]), the supervisor (start, the ready handshake, ping/pong health,
// restart with exponential backoff and jitter, shutdown then SIGTERM then
// SIGKILL) and the bridge between a plugin's chats and the runtime (a
// message becomes a user message of the chat's session; the turn's final
// answer, its approval requests and a typing indicator go back as
// commands).
//
// It imports runtime (and runtime/jsonw), agents and lite/inbox (the
// per-chat queue) only; package lite adapts its App to [Sessions] and
// [Runtime] and runs one [Gateway] per gateways.external entry as a
// lite.Gateway.
//
// # Invariants
//
// A plugin never blocks the runtime loop and never takes the daemon down:
// every line it writes is read by a goroutine of its own and parsed
// leniently (invalid JSON, lines over [MaxLine], unknown types and unknown
// fields are logged, rate-limited, and skipped); every command to it goes
// through a bounded queue that drops (and logs) when the plugin stops
// reading. One goroutine per Gateway owns all of its state (sessions
// followed, approvals pending, requests in flight); the session watchers
// and the pipe readers own nothing and post to it. Every goroutine ends
// when Stop returns.
//
// # Replies
//
// A chat follows its session from a message it sends until the session
// is idle again (the turn_end delivered is its last event): it hears every
// turn's answer and approval request of that stretch, whoever started the
// turn. Each followed session has an outbox record in kv (written through
// the loop's group commit: opened in the transaction of the chat's
// message, moved at each reply the plugin acknowledges with command_ok or
// command_error, closed when the session is idle). A watcher reads the
// session with runtime.Loop.Follow from that position, one reply at a
// time; watchers run only while the plugin is up, and only for followed
// sessions. When the plugin goes down they stop, and what they owe stays
// in the log; once it is ready again (or after a daemon restart, for the
// records left open) they resume from the durable position. So a reply
// produced while the plugin is down is delivered when it is back, and
// none is sent twice, unless the plugin had it but died before it
// acknowledged it. An approval request decided meanwhile is not asked
// again.
//
// # Caveats
//
// The protocol has no acknowledgement of message_received: a message a
// plugin wrote just before it crashed may be lost. A reply the plugin
// does not acknowledge within Timing.AckTimeout counts as delivered (so a
// plugin that never acknowledges still gets every reply, once); one the
// plugin did not even read waits for its restart. A turn
// started from elsewhere (HTTP, the CLI) while the chat does not follow
// its session is not pushed to the chat; [Gateway.Send] is the way to
// reach a chat unasked, and it sends nothing while the plugin is down: it
// says so, and the caller may try again. A plugin whose ready names
// another major protocol version is stopped and not restarted.
package plugin
