package runtime

import (
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Sessions belong to someone. Every session records its principal (who it
// speaks for, agents.Principal) on its session_start, in its checkpoints
// and in its meta record. Tools that read other sessions (the session
// tool, memory recall over past conversations) ask Viewer.Sees of every
// session before they show any of it: that is the one place the rule is.

// OriginWebhookPrefix starts the Origin of a message a webhook sent
// ("webhook:<name>"). A turn such a message starts reads other sessions
// as the webhook, not as the session's principal.
const OriginWebhookPrefix = "webhook:"

// OriginWebhook is the Origin of a message the webhook name sent.
func OriginWebhook(name string) string { return OriginWebhookPrefix + name }

// Viewer is a session looking at its agent's other sessions, as its
// running turn may: its principal and the scope the agent's policy gives
// that principal. The zero Viewer sees nothing.
type Viewer struct {
	Session   string
	Agent     string
	Principal agents.Principal
	Scope     agents.SessionScope
	// Access is the agent's policy's sessions key (for its linked
	// principals).
	Access agents.SessionAccess
}

// SessionRef is what Sees needs of a session.
type SessionRef struct {
	ID, Agent string
	// Parent is the session that spawned it, "" for none.
	Parent    string
	Principal agents.Principal
}

// Ref is what Sees needs of i.
func (i *SessionInfo) Ref() SessionRef {
	return SessionRef{ID: i.ID, Agent: i.Agent, Parent: i.Parent, Principal: i.Principal}
}

func (s *state) ref() SessionRef {
	return SessionRef{ID: s.ID, Agent: s.Agent, Parent: s.parent(), Principal: s.Principal}
}

// maxAncestry bounds the parent links Sees follows: deeper than any
// subagents.max_depth, and a loop in damaged records ends.
const maxAncestry = 64

// Sees reports whether v may read session t. lookup finds a session by
// id (for t's ancestors); ok false when it is gone. The rule: never
// another agent's session; always v's own and its subagents' (at any
// depth); beyond that what v.Scope allows: nothing (self), the sessions of
// v's principal or of a principal linked with it (principal), or every
// session of the agent (agent).
func (v Viewer) Sees(t SessionRef, lookup func(id string) (SessionRef, bool)) bool {
	if v.Session == "" || t.Agent != v.Agent {
		return false
	}
	if t.ID == v.Session {
		return true
	}
	for p, n := t.Parent, 0; p != "" && n < maxAncestry; n++ {
		if p == v.Session {
			return true
		}
		r, ok := lookup(p)
		if !ok {
			break
		}
		p = r.Parent
	}
	switch v.Scope {
	case agents.ScopeAgent:
		return true
	case agents.ScopePrincipal:
		return !v.Principal.IsZero() && v.Access.Same(v.Principal, t.Principal)
	}
	return false
}

// viewer is who s's current turn reads other sessions as: the session's
// principal, or the webhook's when a webhook's message started the turn
// (what a webhook sends is a stranger's text, whatever chat it lands in),
// with the scope agent a's policy gives it.
func viewer(s *state, a *LoadedAgent) Viewer {
	p := s.Principal
	if hook, ok := strings.CutPrefix(s.Origin, OriginWebhookPrefix); ok && hook != "" {
		p = agents.WebhookPrincipal(hook)
	}
	var acc agents.SessionAccess
	if a != nil && a.Policy != nil {
		acc = a.Policy.Sessions
	}
	return Viewer{Session: s.ID, Agent: s.Agent, Principal: p, Scope: acc.ScopeFor(p.Automated()), Access: acc}
}

// principalOr is p, or the principal the session's record implies when p
// is none (a session stored before principals existed).
func principalOr(p agents.Principal, gateway, chatID, parent string) agents.Principal {
	if !p.IsZero() {
		return p
	}
	return agents.PrincipalOf(gateway, chatID, parent)
}

// parsePrincipal reads a stored principal; the zero Principal when absent
// or unreadable (the caller then falls back on principalOr).
func parsePrincipal(s string) agents.Principal {
	if s == "" {
		return agents.Principal{}
	}
	p, err := agents.ParsePrincipal(s)
	if err != nil {
		return agents.Principal{}
	}
	return p
}
