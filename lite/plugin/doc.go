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
// It imports runtime and agents only; package lite adapts its App to
// [Sessions] and [Runtime] and starts one [Gateway] per gateways.external
// entry.
//
// # Invariants
//
// A plugin never blocks the runtime loop and never takes the daemon down:
// every line it writes is read by a goroutine of its own and parsed
// leniently (invalid JSON, lines over [MaxLine], unknown types and unknown
// fields are logged, rate-limited, and skipped); every command to it goes
// through a bounded queue that drops (and logs) when the plugin stops
// reading. One goroutine per Gateway owns all of its state (sessions
// watched, approvals pending, requests in flight); the session watchers
// and the pipe readers own nothing and post to it. Every goroutine ends
// when Stop returns.
//
// # Caveats
//
// The protocol has no acknowledgement of message_received: a message a
// plugin wrote just before it crashed may be lost, and a reply produced
// while the plugin is down (between restarts) is dropped, not queued.
// A plugin whose ready names another major protocol version is stopped
// and not restarted.
package plugin
