// Package llm owns the HTTP plumbing every model provider shares: a
// transport with a connect timeout and no overall deadline (streams are
// long), a retry loop with capped exponential backoff and full jitter that
// only runs before a stream has begun, a watchdog for the first-token and
// stream-idle timeouts, a line reader for NDJSON and SSE bodies (the SSE
// field rules the lines go through are package runtime/sse's), the mapping
// of failures to *runtime.ProviderError sentences, and the parts of the request bodies the providers share
// (messages, tools), written with runtime/jsonw.
//
// Providers live in sub-packages (llm/ollama, llm/openai, llm/anthropic)
// and the httptest fakes in llm/llmtest. This package may import runtime,
// runtime/jsonw, the standard library and fastjson; never a provider, a
// gateway or storage.
//
// # Caveats
//
// Retries happen only inside [Client.Do], that is before the first byte of a
// successful response body. Once a [Stream] is returned, any failure is final
// for this call: the runtime decides whether to send the request again.
//
// Cancelling the caller's context always yields the context's error
// (errors.Is(err, context.Canceled) holds), never a *runtime.ProviderError.
package llm
