// Package httpapi is agnx-lite's HTTP gateway: the Agnx HTTP API (agents,
// sessions, messages, SSE streams, approvals, admin), health and version
// routes and an A2A agent card, answering as Agnx does so its clients read
// lite unchanged. Errors are RFC 7807 problem+json: Agnx's types for 400,
// 404 and 500, urn:agnx-lite:problem:<code> otherwise, lite's code in the
// extension member "code"; refused callers get Agnx's 401 (no body) or
// 403 "Admin access denied". Extensions only add: routes, fields, keys.
//
// SSE streams are Agnx's by default: start, token, then one of done,
// error, cancelled or approval_required, nothing Agnx's client parser
// would abort on (sse_view.go). A client that asks (?events=) gets lite's
// stream: the session's durable events with `id:` set to their seq, so a
// client that reconnects with Last-Event-ID gets what it missed from the
// log, then live events: no gap, no duplicate. Tokens stream without ids
// and are not replayed; the final message is. A turn that waits for a
// decision answers POST .../messages with 202 and POST .../approve
// returns the rest of it (approve.go).
//
// Closed by default: without an API token only local clients are
// served; admin routes need the admin token (or a local client when none
// is set), independent of the API token; bodies are capped at 2 MB. A
// local client is a loopback connection with no forwarding header
// (remote.go): a reverse proxy or tunnel on the box connects from
// 127.0.0.1 for clients anywhere. Options.TrustedProxies names the
// proxies whose forwarded client address (the right-most untrusted one)
// is believed, for the throttle and the logs. Wrong tokens are throttled
// per client address, in a bounded table (throttle.go); refusals are
// logged, rate-limited, and counted in /metrics (refusals.go). A slow client never blocks the loop:
// its subscription is bounded and dropped when it falls behind, and the
// client resumes with Last-Event-ID.
//
// Web pages in the user's browser are the other callers to keep out,
// token or not (edge.go): a Host that is not this server's is 421 (DNS
// rebinding), an Origin or Sec-Fetch-Site of a page not allowed is 403,
// a body not declared JSON is 415, and CORS answers only configured
// origins. Ids and names are checked before use (ids.go). ConnLimits
// (conns.go) keeps idle connections from locking clients out.
//
// Inbound webhooks (POST /api/v1/hooks/{name}, hooks.go) are the one
// exception to both: other servers call them, authenticated by each hook's
// own secret or token (Options.Hooks), with no API token and no Host
// check; a request from a web page is still refused.
//
// The OpenAI-compatible endpoint (GET /v1/models, POST
// /v1/chat/completions, openai*.go) runs a turn of the agent named in
// "model" for clients that speak OpenAI's chat API: one durable session
// per caller and agent, only the tail of the resent history sent to it,
// approvals denied (the client cannot answer them), errors in OpenAI's
// shape.
//
// The web UI (webui.go) is served through the same edge: GET / and GET
// /ui/{file...} answer with Options.UI's files (lite/webui), and POST
// /ui/signin trades the API token for the agnx_web_<instance> cookie
// (webcookie.go): HttpOnly, SameSite=Strict, __Host- over HTTPS, an
// expiry signed with HMAC-SHA256 keyed by the token, so changing the
// token signs every browser out. The cookie stands for the token on api
// routes only, never on admin routes, hooks or /v1; wrong tokens count
// against their address as bearer tokens do.
// Every /api and /v1 answer is Cache-Control: no-store: conversations are
// never kept by a browser or a proxy. GET /api/v1/health (health_report.go)
// gives the web UI's dashboard doctor's facts, from Options.Health.
//
// httpapi imports runtime (with runtime/jsonw, sched and tasks), agents and
// lite/webaddr, never the store; lite wires it.
package httpapi
