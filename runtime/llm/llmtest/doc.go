// Package llmtest provides httptest fakes of Ollama (/api/chat, NDJSON), of
// an OpenAI-compatible server (/v1/chat/completions, SSE) and of Anthropic's
// Messages API (/v1/messages, SSE) that speak the real wire formats, for the providers' tests, other packages' tests,
// benchmarks, crash tests and the standalone fake-server binary of the
// end-to-end tests.
//
// A fake answers each request with a [Reply] chosen by a [Handler]: a
// [Script] plays fixed replies in order, [Echo] answers any number of turns.
// A Reply describes text split into chunks, thinking, tool calls (with
// argument fragments for OpenAI), usage, and failure modes: an error status
// with Retry-After, a stall, a dropped connection, an in-stream error, a
// body that ends early. Every request is recorded, decoded enough for
// assertions ([RecordedRequest]).
//
// It may import the standard library only (encoding/json is fine here: it
// gives the providers' hand-written encoders an independent check). It
// never imports runtime, so any package's tests can use it.
//
// # Caveats
//
// A stalled reply blocks until the client gives up or the server is closed
// with [Server.Close]; it never sleeps.
package llmtest
