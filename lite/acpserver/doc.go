// Package acpserver serves an agnx-lite agent as an ACP agent (the Agent
// Client Protocol, JSON-RPC 2.0 over stdio) so that editors such as Zed
// can talk to it: initialize, session/new, session/load (the session's
// history replayed as session/update notifications), session/prompt
// (tokens streamed as agent_message_chunk, tool calls as tool_call and
// tool_call_update), session/request_permission for the calls the
// agent's policy asks about, and session/cancel.
//
// It owns the mapping between ACP and the runtime's events, and the
// line-level guard in front of the SDK (github.com/coder/acp-go-sdk),
// which drops malformed lines silently: here they are answered with
// -32700 / -32600, lines and prompts are bounded, and requests in flight
// are capped. It reaches sessions through Backend only: Local (a
// runtime.Loop in this process) or HTTP (a running daemon). An ACP
// sessionId is the agnx-lite session id, so a session created in an
// editor stays loadable after a restart, and shows in "agnx-lite session
// list" with gateway "acp".
//
// It may import runtime and lite/httpapi, never lite or the store.
//
// # Caveats
//
// The MCP servers a client offers in session/new are ignored: an
// agent's tools are the ones its spec lists. Images and audio in a
// prompt are refused (promptCapabilities says so). The client's file
// system and terminals are not used: tools work in the agent's own
// workspace, under its policy.
package acpserver
