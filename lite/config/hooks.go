package config

import (
	"fmt"
	"maps"
	"net/textproto"
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/hooks/tmpl"
)

// Hook is one inbound webhook, hooks.<name> in agnx.yaml: who may
// call POST /api/v1/hooks/<name> (exactly one of Secret and Token), what
// its JSON body becomes (Template) and where that message goes (Target).
type Hook struct {
	// Agent runs the hook's messages in the sessions the hook starts (the
	// chat's first session, or the hook's own). Required unless
	// Target.Session names an existing session.
	Agent  string     `yaml:"agent"`
	Target HookTarget `yaml:"target"`
	// Template makes the message from the body: text with actions over
	// the parsed JSON ("{{.repository.full_name}}: {{.action}}"), each a
	// path (.a.b, .commits.0.id, or . for the whole body) then any of
	// | default "text", | json and | trunc N. A missing key or a null
	// renders empty; there are no loops or conditions (lite/hooks/tmpl).
	// Required.
	Template string `yaml:"template"`
	// Secret checks GitHub's X-Hub-Signature-256 (HMAC-SHA256 of the raw
	// body); Token a bearer token (Authorization: Bearer). One of them is
	// required; one that is empty (its ${VAR} set to "") disables the hook:
	// it answers 401 as an unknown one does.
	Secret Secret `yaml:"secret"`
	Token  Secret `yaml:"token"`
	// MaxBodyKB caps the body (default 256, at most 1024).
	MaxBodyKB int `yaml:"max_body_kb"`
	// DeliveryHeader names the header whose value identifies a delivery,
	// for replay protection; empty: X-GitHub-Delivery, X-Delivery-ID or
	// Idempotency-Key, the first one present.
	DeliveryHeader string `yaml:"delivery_header"`
	// MaxPerMinute caps accepted deliveries (default 60); past it, 429.
	MaxPerMinute int `yaml:"max_per_minute"`

	// Parsed is Template parsed, and Signed whether the hook checks
	// GitHub's signature with Secret (else Token is a bearer token): both
	// set by Validate.
	Parsed *tmpl.Template `yaml:"-"`
	Signed bool           `yaml:"-"`
}

// HookTarget is where a hook's messages go: a gateway's chat (its current
// session), one session, or, with neither, a session of the hook's own
// (gateway "webhook", chat the hook's name), started on first use.
type HookTarget struct {
	// Gateway and ChatID name a gateway's chat (both or neither): the
	// messages go to its current session.
	Gateway string `yaml:"gateway"`
	ChatID  string `yaml:"chat_id"`
	// Session is the id of an existing session the messages go to,
	// instead of a chat.
	Session string `yaml:"session"`
}

// Limits of hooks.
const (
	DefaultHookBodyKB = 256 // max_body_kb of a hook that sets none
	maxHookBodyKB     = 1024
	defaultHookPerMin = 60
	maxHookPerMin     = 6000
)

// Disabled reports whether the hook's secret or token is empty: it then
// answers like an unknown hook, never as an open endpoint.
func (h Hook) Disabled() bool { return h.Secret == "" && h.Token == "" }

// validateHooks checks every hook, fills in defaults and parses the
// templates, in name order.
func (c *Config) validateHooks() error {
	for _, name := range slices.Sorted(maps.Keys(c.Hooks)) {
		h := c.Hooks[name]
		if err := c.validateHook(name, &h); err != nil {
			return err
		}
		c.Hooks[name] = h
	}
	return nil
}

func (c *Config) validateHook(name string, h *Hook) error {
	p := "hooks." + name
	if !agents.PlainName(name, false) {
		return c.errorf(p, "hook name %q may contain only a-z, 0-9, _ and -, at most 64 of them", name)
	}
	if err := c.validateHookAuth(p, h); err != nil {
		return err
	}
	if err := c.validateHookTarget(p, h); err != nil {
		return err
	}
	if h.MaxBodyKB == 0 {
		h.MaxBodyKB = DefaultHookBodyKB
	}
	if h.MaxBodyKB < 1 || h.MaxBodyKB > maxHookBodyKB {
		return c.errorf(p+".max_body_kb", "%s.max_body_kb %d is out of range 1..%d", p, h.MaxBodyKB, maxHookBodyKB)
	}
	if h.MaxPerMinute == 0 {
		h.MaxPerMinute = defaultHookPerMin
	}
	if h.MaxPerMinute < 1 || h.MaxPerMinute > maxHookPerMin {
		return c.errorf(p+".max_per_minute", "%s.max_per_minute %d is out of range 1..%d", p, h.MaxPerMinute, maxHookPerMin)
	}
	if d := h.DeliveryHeader; d != "" && (len(d) > 64 || !validHeaderName(d)) {
		return c.errorf(p+".delivery_header", "%s.delivery_header %q is not a header name (e.g. X-GitHub-Delivery)", p, d)
	}
	if h.Template == "" {
		return c.errorf(p, `%s.template is required: the message to make of the body, e.g. "{{.repository.full_name}}: {{.action}}"`, p)
	}
	t, err := tmpl.Parse(h.Template)
	if err != nil {
		return c.errorf(p+".template", "%s.template: %v", p, err)
	}
	h.Parsed = t
	return nil
}

// validateHookAuth asks for exactly one of secret and token, present as a
// key (an empty value disables the hook; doctor warns), and refuses one
// too short to resist guessing.
func (c *Config) validateHookAuth(p string, h *Hook) error {
	hasSecret := h.Secret != "" || c.doc.Has(p+".secret")
	hasToken := h.Token != "" || c.doc.Has(p+".token")
	switch {
	case hasSecret && hasToken:
		return c.errorf(p, "%s has both secret and token: keep one (secret for GitHub's signature, token for Authorization: Bearer)", p)
	case !hasSecret && !hasToken:
		return c.errorf(p, "%s needs a secret (GitHub's X-Hub-Signature-256) or a token (Authorization: Bearer): a hook is never open to anyone, e.g. secret: ${GITHUB_HOOK_SECRET}", p)
	}
	h.Signed = hasSecret
	key, v := p+".secret", h.Secret.Value()
	if hasToken {
		key, v = p+".token", h.Token.Value()
	}
	switch {
	case v == "":
	case strings.TrimSpace(v) != v:
		return c.errorf(key, "%s has spaces or line breaks around it: remove them", key)
	case len(v) < minTokenLen:
		return c.errorf(key, "%s is too short: use at least %d characters, e.g. from `openssl rand -hex 32`", key, minTokenLen)
	}
	return nil
}

func (c *Config) validateHookTarget(p string, h *Hook) error {
	t := &h.Target
	switch {
	case t.Session != "" && (t.Gateway != "" || t.ChatID != ""):
		return c.errorf(p+".target", "%s.target names a session and a chat: give one (session: ID, or gateway and chat_id)", p)
	case (t.Gateway == "") != (t.ChatID == ""):
		return c.errorf(p+".target", "%s.target needs both gateway and chat_id (e.g. gateway: telegram, chat_id: \"12345\")", p)
	case t.Gateway != "" && !agents.ValidName(t.Gateway):
		return c.errorf(p+".target.gateway", "%s.target.gateway %q is not a gateway name (letters, digits and hyphens)", p, t.Gateway)
	case len(t.ChatID) > 256 || strings.ContainsFunc(t.ChatID, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return c.errorf(p+".target.chat_id", "%s.target.chat_id is not a chat id: at most 256 characters, no control characters", p)
	case t.Session != "" && !validSessionID(t.Session):
		return c.errorf(p+".target.session", "%s.target.session %q is not a session id (agnx-lite sessions lists them)", p, t.Session)
	case h.Agent == "" && t.Session == "":
		return c.errorf(p, "%s.agent is required: the agent that answers the hook's messages", p)
	case h.Agent != "" && !agents.ValidName(h.Agent):
		return c.errorf(p+".agent", "%s.agent %q is not a valid agent name (letters, digits and hyphens)", p, h.Agent)
	}
	return nil
}

// validSessionID accepts what session ids are made of, at most 128 bytes.
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// validHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func validHeaderName(s string) bool {
	return s != "" && textproto.CanonicalMIMEHeaderKey(s) != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	})
}

// Describe is the line doctor and the log give for the hook called name.
func (h Hook) Describe(name string) string {
	auth := "HMAC secret (X-Hub-Signature-256)"
	if !h.Signed {
		auth = "bearer token"
	}
	target := "its own session"
	switch {
	case h.Target.Session != "":
		target = "session " + h.Target.Session
	case h.Target.Gateway != "":
		target = fmt.Sprintf("chat %s:%s", h.Target.Gateway, h.Target.ChatID)
	}
	return fmt.Sprintf("POST /api/v1/hooks/%s → %s (agent %s), %s", name, target, h.Agent, auth)
}
