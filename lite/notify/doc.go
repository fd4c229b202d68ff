// Package notify owns agnx-lite's outbound notifications: the worker that
// posts to webhooks and ntfy, chat notices, and the notices of turns
// nobody watched.
//
// Three kinds of notification reach a Worker. Command is the loop's
// runtime.Options.Notify: a call an agent's policy asks to be told of.
// Notify is the agents' own notices (a background process ended, a
// heartbeat or a worker job has something to say), sent per the agent's
// spec.notify. TurnEnded is a turn-end handler: a turn of a session no
// chat gateway serves that ended with nobody watching it (or that a
// schedule, webhook or process started) gets a short notice, or every
// turn does, per the agent's spec.notify.when.
//
// None of them blocks. The log gets its deliveries at once; everything
// else goes through one goroutine with a bounded queue (16): a full queue
// drops a notification with a log line, so a slow server never stalls
// the loop. A webhook or ntfy post gets 5 s, follows no redirect and may
// not reach a loopback, link-local (cloud metadata), unspecified or
// multicast address, checked on the address dialled. An ntfy token's
// ${NAME} may name only what agnx.yaml's sandbox.env offers. A chat
// delivery posts a notice (Origin NoticeOrigin) into the chat's current
// session and has its gateway follow it, so the gateway's outbox delivers
// it durably and once; only a chat that already has a session of that
// agent gets one.
//
// What it needs from above it declares: Agents (spec.notify), Chats
// (a session's chat, a chat's session, a notice) and Outbox (a gateway
// following a session). The root package lite satisfies them and owns
// the Worker: Start in Open, Stop in Close after the loop, its last
// caller, with DrainTimeout for what is still queued.
//
// notify imports agents, runtime and lite/config; no other package of
// lite.
package notify
