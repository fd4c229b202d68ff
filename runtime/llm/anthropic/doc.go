// Package anthropic is the provider for Anthropic's Messages API: POST
// {base}/v1/messages with "stream": true, answered with server-sent events
// (message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error). Servers that speak the same API, such as
// Ollama's /v1/messages, work through the base URL. It owns the request
// encoding (system and tools as the cached prefix, tool results grouped
// into user messages, signed thinking returned) and the event decoding;
// the SSE framing comes from package runtime/sse, retries, timeouts and
// error sentences from package llm.
//
// It may import runtime, runtime/jsonw, runtime/llm, runtime/sse, the
// standard library and fastjson.
//
// # Caveats
//
// Prompt caching marks the system prompt (or, without one, the last tool)
// and the last block of the conversation with cache_control "ephemeral":
// repeated calls in a tool loop read the prefix from the cache. A system
// prompt that changes on every call ({{time}}) defeats the cache, and
// prompts shorter than the model's minimum (1,024 tokens and up) are not
// cached at all; Usage.CacheReadTokens says what was.
//
// Thinking text goes to onDelta as Delta.Thinking, never into the answer.
// Thinking blocks come back in Message.Thinking with their signatures and
// are sent back, first on the assistant message they belong to, while the
// exchange runs (after the last user message that does not follow tool
// results), as the API requires during a tool loop; earlier ones are left
// out, and so is a block without a signature (a compatible server's). This
// build never asks for extended thinking: the blocks come from servers
// that think unasked.
//
// A request without tools whose history holds tool calls (the last,
// tool-less call of a turn that used all its rounds) carries those calls
// and results as text: the API refuses tool_use blocks when no tools are
// defined.
//
// A stream that stops for max_tokens while writing a tool call is an
// error: the call's input is cut short and is never run.
package anthropic
