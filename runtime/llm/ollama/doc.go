// Package ollama is the provider for Ollama's native chat API: POST
// {base}/api/chat with "stream": true, answered with NDJSON, one JSON object
// per line. It owns the request encoding and the chunk decoding; retries,
// timeouts and error sentences come from package llm.
//
// It may import runtime, runtime/llm, the standard library and fastjson.
//
// # Caveats
//
// Ollama sends tool-call arguments as a JSON object; they are re-encoded as
// JSON text for runtime.ToolCall.Arguments. Older Ollama versions send no
// call ids, so the client makes them up ("call_<tag>_<n>"), unique within
// a response and very likely within a session.
//
// Thinking (message.thinking) goes to onDelta as Delta.Thinking and never
// into the final message. Tool calls written as text by small models are
// passed through as text: detecting them is the runtime's job
// (runtime/textcall).
package ollama
