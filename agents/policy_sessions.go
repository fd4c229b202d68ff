package agents

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SessionScope is how far a session sees the agent's other sessions
// through the session tool and memory recall. Whatever the scope, a
// session sees itself and the subagents it spawned, and never another
// agent's sessions.
type SessionScope string

// The scopes, narrowest first.
const (
	// ScopeSelf: nothing beyond the session and its subagents.
	ScopeSelf SessionScope = "self"
	// ScopePrincipal: also the sessions of the same principal (and of the
	// principals linked with it).
	ScopePrincipal SessionScope = "principal"
	// ScopeAgent: every session of the agent, as in Agnx.
	ScopeAgent SessionScope = "agent"
)

// wider reports whether s sees more than t.
func (s SessionScope) wider(t SessionScope) bool {
	rank := func(x SessionScope) int {
		return slices.Index([]SessionScope{ScopeSelf, ScopePrincipal, ScopeAgent}, x)
	}
	return rank(s) > rank(t)
}

// SessionAccess is the sessions key of a policy: which of the agent's
// sessions one of its sessions may read. By default a person's session
// (the owner, a chat, an OpenAI caller) sees the sessions of its own
// principal, and a session a webhook, a schedule or a task started, or a
// turn a webhook's message started, sees only itself.
//
//	sessions:
//	  scope: principal     # self | principal (default) | agent
//	  automated: self      # self (default) | principal | agent
//	  linked: [owner, "telegram:user:123"]   # one person: each sees the others'
type SessionAccess struct {
	// Scope is for the sessions people speak through; Automated for the
	// others (see Principal.Automated). Empty: the default.
	Scope     SessionScope
	Automated SessionScope
	// Linked are principals that are one person: with scope principal,
	// each sees the sessions of the others.
	Linked []Principal
	// Set by a tier: a more specific tier may narrow them, not widen.
	scopeSet, automatedSet bool
}

// ScopeFor is the scope of a session that speaks for p, or of a turn a
// webhook started (automated).
func (a SessionAccess) ScopeFor(automated bool) SessionScope {
	if automated {
		if a.Automated == "" {
			return ScopeSelf
		}
		return a.Automated
	}
	if a.Scope == "" {
		return ScopePrincipal
	}
	return a.Scope
}

// Same reports whether p and q are one principal, or both linked.
func (a SessionAccess) Same(p, q Principal) bool {
	return p == q || (slices.Contains(a.Linked, p) && slices.Contains(a.Linked, q))
}

// Wider says, one phrase each, how a lets sessions see more than the
// default: what agent import shows and asks --trust for.
func (a SessionAccess) Wider() []string {
	var out []string
	if s := a.ScopeFor(false); s.wider(ScopePrincipal) {
		out = append(out, fmt.Sprintf("lets every conversation with it read all its other conversations, whoever had them (sessions.scope: %s)", s))
	}
	if s := a.ScopeFor(true); s.wider(ScopeSelf) {
		out = append(out, fmt.Sprintf("lets conversations webhooks, schedules and tasks start read its other conversations (sessions.automated: %s)", s))
	}
	if len(a.Linked) > 0 {
		names := make([]string, len(a.Linked))
		for i, p := range a.Linked {
			names[i] = p.String()
		}
		out = append(out, "lets "+strings.Join(names, ", ")+" read each other's conversations with it (sessions.linked)")
	}
	return out
}

// sessionsFile is the sessions key of policy.yaml.
type sessionsFile struct {
	Scope     string   `yaml:"scope"`
	Automated string   `yaml:"automated"`
	Linked    []string `yaml:"linked"`
}

// mergeSessions merges a tier's sessions key into p: the most specific
// tier that sets a scope decides, except that it cannot widen one a more
// general tier set (the operator's data-dir policy.yaml bounds every
// agent); linked principals add up.
func (p *Policy) mergeSessions(doc *Doc, f sessionsFile) error {
	a := &p.Sessions
	for _, s := range []struct {
		key, val string
		allowed  []string
		dst      *SessionScope
		set      *bool
	}{
		{"sessions.scope", f.Scope, []string{"self", "principal", "agent"}, &a.Scope, &a.scopeSet},
		{"sessions.automated", f.Automated, []string{"self", "principal", "agent"}, &a.Automated, &a.automatedSet},
	} {
		if s.val == "" {
			continue
		}
		if err := oneOf(doc, s.key, s.val, s.allowed...); err != nil {
			return err
		}
		v := SessionScope(s.val)
		if *s.set && v.wider(*s.dst) {
			p.Warnings = append(p.Warnings, doc.Errorf(s.key, "%s %s does not widen the %s a more general policy file set (ignored); change that file instead", s.key, v, *s.dst).Error())
			continue
		}
		*s.dst, *s.set = v, true
	}
	for i, s := range f.Linked {
		pr, err := ParsePrincipal(s)
		if err != nil {
			key := "sessions.linked[" + strconv.Itoa(i) + "]"
			return doc.Errorf(key, "%s: %s", key, err)
		}
		if !slices.Contains(a.Linked, pr) {
			a.Linked = append(a.Linked, pr)
		}
	}
	return nil
}
