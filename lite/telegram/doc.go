// Package telegram is agnx-lite's built-in Telegram gateway: it long-polls
// the Bot API, admits allow-listed users, turns each message into a
// user_message of the chat's session and streams the agent's answer back by
// editing one message in place.
//
// It owns the Bot API client (Client, direct calls with encoding/json), the
// Markdown → Telegram-HTML converter (HTML), the 4,096-character splitter
// (Split) and the gateway (Gateway). It imports runtime, agents and
// lite/inbox (the per-chat queue), and reads and follows sessions only
// through the runtime.Loop (never the store); what it needs of lite (the chat → session map, the agents, kv
// writes that join the loop's group commit) it declares as the Chats and
// Agents interfaces, which lite implements.
//
// # Shape
//
// The gateway has three parts. The poller is one goroutine: it fetches
// updates and handles them in order, commands included. The outbox is one
// goroutine owning the watchers: a session gets one while it has a reply
// owed or a turn running (idle chats cost no goroutine), and the outbox
// decides when it ends, so a message sent as it ends is never missed. A
// watcher follows its session with Loop.Follow from the outbox record's
// delivered seq (the log, then live) and makes its own Bot API calls, so
// a slow chat delays no other. Stop stops the poller, lets the watchers
// finish until its deadline, then stops them and waits for them.
//
// # Guarantees
//
// Exactly once in: the update offset is a runtime.Cursor committed in the
// same bbolt transaction as the user_message the update produced. An update
// that produces no message (a refusal, a command, an ignored group message)
// moves the offset with its own kv write after it is handled.
//
// At most one visible reply: what the agent says is already durable (its
// assistant_response, approval_required and error events); a per-session
// kv record (the outbox) holds the last delivered seq and, written
// durably before each send, the seq being delivered. After a restart every
// deliverable event after the last delivered one is sent, except one
// marked "delivering": it may have reached the chat before the crash, and
// showing a reply twice is worse than asking the user to repeat a
// question. That mark is the one write a reply costs (in the loop's group
// commit); the "delivered" after the send rides on the next mark or on
// the write a watcher makes when it ends. An approval request the log
// already shows decided (or its turn over) is not asked again.
//
// # Caveats
//
// A command (/new, /agent) and its offset are two transactions: a crash in
// between runs the command again. A streamed preview message is sent before
// the answer is durable; after a crash mid-stream the user may see the
// partial preview and, once the turn resumes, the full answer.
package telegram
