// Package telegram is agnx-lite's built-in Telegram gateway: it long-polls
// the Bot API, admits allow-listed users, turns each message into a
// user_message of the chat's session and streams the agent's answer back by
// editing one message in place.
//
// It owns the Bot API client (Client, direct calls with encoding/json), the
// Markdown → Telegram-HTML converter (HTML), the 4,096-character splitter
// (Split) and the gateway (Gateway). It imports runtime, storage and agents;
// what it needs of lite (the chat → session map, the agents) it declares as
// the Chats and Agents interfaces, which lite implements.
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
// kv record (the outbox) holds the last delivered seq and, written before
// each send, the seq being delivered. After a restart every deliverable
// event after the last delivered one is sent, except one marked
// "delivering": it may have reached the chat before the crash, and showing
// a reply twice is worse than asking the user to repeat a question.
//
// # Caveats
//
// A command (/new, /agent) and its offset are two transactions: a crash in
// between runs the command again. A streamed preview message is sent before
// the answer is durable; after a crash mid-stream the user may see the
// partial preview and, once the turn resumes, the full answer.
package telegram
