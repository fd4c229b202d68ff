// Package jsonw is agnx-lite's one JSON writer: the event log, checkpoints
// and session records (runtime), the SSE data of the HTTP API (httpapi) and
// the request bodies of the model providers (runtime/llm) are all appended
// with it. It exists because those are hot paths whose values are mostly
// strings and raw JSON (tool schemas, call arguments) that encoding/json
// would reflect over or re-parse.
//
// A [Writer] appends to a caller's buffer, allocates nothing of its own and
// keeps only one bit of state: whether the next value needs a comma. It
// does not check that the document is well formed (a key outside an
// object, an unclosed array): the callers are few and each is covered by a
// test that parses its output.
//
// Strings are escaped for JSON and also for the places JSON is embedded
// in: U+2028 and U+2029 are escaped (JavaScript, SSE data lines), invalid
// UTF-8 becomes U+FFFD, and every control character is escaped. HTML
// characters (<, >, &) are written as they are, unlike encoding/json.
//
// jsonw imports only the standard library, so every package can use it.
package jsonw
