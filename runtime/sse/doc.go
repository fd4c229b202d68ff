// Package sse owns agnx-lite's one implementation of the Server-Sent
// Events wire format (the WHATWG "event stream"), both ways: [AppendEvent]
// and [Writer] write it (the HTTP API's event streams and its OpenAI
// endpoint, the fake model servers of llmtest), [Reader] reads a whole
// stream (the HTTP API's client, the bench client), and [Parser] applies
// the field rules to lines a caller has already split (the model
// providers, whose line reader also serves NDJSON).
//
// The rules, as browsers apply them: lines end with CRLF, LF or CR; a
// blank line dispatches the event; a line starting with ':' is a comment
// (a keep-alive); "field: value" loses one space after the colon, and a
// line without a colon is a field with an empty value; data: lines are
// joined with "\n"; an event without a data: line is not dispatched; an
// event without an event: line is named "message"; an id: holding NUL is
// ignored; retry: and unknown fields are ignored (no caller reconnects on
// the server's advice). The writer splits data at line breaks into one
// data: line each and cuts a name or id at its first line break, so what
// it writes reads back the same (FuzzRoundTrip).
//
// Every input is bounded: a line, and the data of one event, may hold at
// most the reader's limit ([DefaultMax] unless told); past it the reader
// returns [ErrTooLarge] rather than grow without end.
//
// sse imports only the standard library, so runtime/llm, the gateways,
// cmd and bench can all use it; it lives under runtime, beside jsonw, as
// the lowest folder all of those may import.
//
// # Caveats
//
// [Reader] sees a line ended by a lone CR only when the next byte arrives
// (it could be the first half of a CRLF). [Parser] takes whatever lines it
// is given: the model providers split with llm.LineReader, at LF and CRLF
// only, since a model server never ends lines with a lone CR.
//
// An incomplete event at the end of a stream is dropped by [Reader], as
// the spec says; [Parser.Flush] hands it to callers that want it (the
// model providers: some servers omit the last blank line).
package sse
