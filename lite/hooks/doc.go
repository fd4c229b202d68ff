// Package hooks owns the inbound webhooks, the hooks: section of
// agnx.yaml. A Receiver authenticates a delivery (GitHub's HMAC signature
// or a bearer token, at the same cost whatever the name, so that the
// hooks cannot be listed by trying names), meters it, renders the hook's
// template over its JSON body (lite/hooks/tmpl, the template language)
// and stores the message in the hook's target session: a chat's, a named
// session, or one of the hook's own. A delivery runs once: its id and,
// for a signed hook, its body's digest are remembered in the transaction
// that stores its message (seen.go). The HTTP API calls it for
// POST /api/v1/hooks/{name} (httpapi.Hooks); it runs nothing in the
// background.
//
// It imports the domain (agents, runtime, storage), its part of
// lite/config (config.Hook), lite/hooks/tmpl, and lite/httpapi for the
// receipt and error types of the interface it implements. What it needs
// of the root, a chat's session and its gateway following one, it
// declares as Chats, which the root satisfies.
package hooks
