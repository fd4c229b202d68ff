// Package openai is the provider for OpenAI-compatible chat completions:
// POST {base}/chat/completions with "stream": true, answered with
// server-sent events. One client covers OpenAI, OpenRouter, llama.cpp's
// server, LM Studio and vLLM; they differ only in base URL, key and
// extra headers. It owns the request encoding, the decoding of the
// streamed chunks and the assembly of tool calls from fragments; the SSE
// framing comes from package runtime/sse, retries, timeouts and error
// sentences from package llm.
//
// It may import runtime, runtime/llm, runtime/sse, the standard library
// and fastjson.
//
// # Caveats
//
// Tool-call arguments stream as string fragments keyed by the call's index;
// they are concatenated verbatim and not validated: a model may produce
// invalid JSON, and the tool reports that back to it.
//
// "reasoning_content" (vLLM, DeepSeek, llama.cpp) and "reasoning"
// (OpenRouter) deltas go to onDelta as Delta.Thinking and never into the
// final message. A stream that ends without "data: [DONE]" and without a
// finish_reason is reported as ErrInterrupted.
package openai
