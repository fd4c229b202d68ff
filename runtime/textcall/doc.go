// Package textcall finds tool calls that small local models write as text
// instead of using the API's tool-call channel, and keeps that markup out
// of the live stream of deltas.
//
// [Extract] recognises, in order of precedence:
//   - <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks
//     (Qwen, Hermes), several of them, the last possibly unterminated;
//   - fenced blocks (```json, ```tool_call or plain ```) holding a call
//     object or an array of them;
//   - Mistral's [TOOL_CALLS] [...] and [TOOL_CALLS]name[ARGS]{...}, and
//     Llama's <|python_tag|>{...};
//   - a whole message that is a call object or an array of them.
//
// A call object has "name" and "arguments" (or "parameters"), given as an
// object or as a string holding an object; {"function": {...}} wrappers
// are unwrapped. Only calls naming a known tool count, so prose and JSON
// that name no tool stay text. Fenced and bare objects must also carry no
// keys beyond those of a call.
//
// [Filter] holds back streamed text from the first sign of such markup, so
// the runtime can drop it once Extract found a call, or release it if not.
//
// textcall is a leaf: it imports the standard library and fastjson, never
// runtime (which imports it).
//
// # Caveats
//
// After a ```json or plain ``` fence, or a message starting with { or [,
// the Filter holds everything until Flush: an answer that merely shows JSON
// reaches the user in one piece at the end instead of streaming.
package textcall
