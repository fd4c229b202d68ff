// Package agnxcompat holds the Agnx contract test: it drives the real
// agnx-lite binary exactly as the parent project's client (Duragent v0.5.4,
// ex Agnx: crates/duragent-client and crates/duragent-cli) does, and fails
// on any difference from /work/shared/AGNX-COMPAT.md §6 (HTTP API), §7 (SSE)
// and §8 (errors).
//
// It owns, as test files only:
//   - a Go port of the parent client: the requests it builds (paths, bodies
//     serialized as serde_json does, headers), the response structs with
//     their required fields (a missing required field or a wrong type fails;
//     unknown fields are fine), its status handling and its problem+json
//     fallback (detail, else title, else "HTTP <status>");
//   - a port of the parent's SSE parser and stream consumer, fed the
//     response's real network chunks (one HTTP/1.1 chunk = one chunk, each
//     UTF-8-decoded alone and dropped if invalid);
//   - the harness: the binary built once, a daemon per group of cases on a
//     temporary workspace with a duragent.yaml, agents whose provider is an
//     llmtest OpenAI fake;
//   - the cases, one subtest per contract row.
//
// It is written from the contract and the parent's client code, never from
// lite/httpapi: a failure here means the daemon differs from what the
// parent's client accepts.
//
// # Caveats
//
// The parent reads the body with hyper, which may also split one large HTTP
// chunk into several frames; the port keeps HTTP chunk boundaries only, so
// it is as strict as the parent for events written whole per flush.
package agnxcompat
