// Package runtime is the domain root of agnx-lite: sessions, turns, their
// events, the single event loop that owns them, and the Provider and Tool
// interfaces the loop drives.
//
// # The loop
//
// One goroutine, Loop.Run, owns every resident session. Everything that
// changes a session arrives as a request in one bounded inbox: a user
// message, a model's answer, a tool's result, a cancel. Slow work (a model
// call, a tool call, building an agent) runs in a worker goroutine that
// gets an immutable request, owns nothing, and posts its result back;
// the loop itself only looks agents up. No mutex guards session state.
//
// # Durability
//
// A durable event is folded into the session's state when it is recorded
// and written in the next group commit: the loop drains what is waiting in
// its inbox and commits it all in one bbolt transaction, one fsync per
// batch. Work that depends on an event (calling the model after a user
// message, running a tool after a tool_call, acknowledging a Send) starts
// only after the commit. Tokens are never stored; the final answer is.
//
// A session's state is its context window, bounded by the agent's
// max_history_tokens: after a turn end leaves it over the budget, a worker
// asks the agent's model to summarise the older part, and a durable
// history_compaction event moves the window's start (loop_compact.go); the
// older events stay in the log. A checkpoint (every CheckpointEvery events
// and at every turn end) stores where the window starts and the summary,
// not the window, so it is small whatever the budget; recovery reads the
// latest checkpoint, replays the window from the log, then the events
// after the checkpoint.
//
// # Whose sessions
//
// Every session records its principal (agents.Principal: the owner, a
// chat, an OpenAI caller, a webhook, a schedule, a task) on its
// session_start, in its checkpoints and in its meta record; a subagent
// gets the principal its parent's turn speaks for. A tool that shows other
// sessions to the model (the session tool, memory recall) shows only what
// the call's Viewer Sees (principal.go): the one rule, under the agent's
// policy (agents.SessionAccess).
//
// runtime imports storage, agents (for types) and runtime/jsonw (the JSON
// writer it shares with the providers and the HTTP API), and nothing from
// lite or the gateways. Providers live in runtime/llm/<name>, built-in
// tools in runtime/tools. The event types, durable or not, are listed once
// in EventTypes.
package runtime
