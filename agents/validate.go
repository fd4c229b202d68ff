package agents

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// apiVersions are the agent.yaml apiVersion values accepted: agnx-lite's own
// and Duragent's (Agnx's later name), which mean the same format.
var apiVersions = [...]string{"agnx/v1alpha1", "duragent/v1alpha1"}

func (af *agentFile) validate(doc *Doc) error {
	if err := af.validateHeader(doc); err != nil {
		return err
	}
	if err := validateModel(doc, &af.Spec.Model); err != nil {
		return err
	}
	if err := validateSession(doc, &af.Spec.Session); err != nil {
		return err
	}
	if err := validateAccess(doc, &af.Spec.Access); err != nil {
		return err
	}
	if err := validateTools(doc, af.Spec.Tools); err != nil {
		return err
	}
	if err := validateMemory(doc, af.Spec.Memory); err != nil {
		return err
	}
	if err := validateHeartbeat(doc, af.Spec.Heartbeat); err != nil {
		return err
	}
	if err := validateNotify(doc, &af.Spec.Notify); err != nil {
		return err
	}
	warnings, err := validateHooks(doc, &af.Spec.Hooks)
	if err != nil {
		return err
	}
	af.warnings = append(af.warnings, warnings...)
	return localRefs(doc, &af.Spec)
}

func (af *agentFile) validateHeader(doc *Doc) error {
	switch {
	case af.APIVersion == "":
		return doc.Errorf("apiVersion", "apiVersion is required (use %s)", apiVersions[0])
	case !slices.Contains(apiVersions[:], af.APIVersion):
		return doc.Errorf("apiVersion", "apiVersion %q is not one of %s", af.APIVersion, strings.Join(apiVersions[:], ", "))
	case af.Kind == "":
		return doc.Errorf("kind", "kind is required (use Agent)")
	case af.Kind != "Agent":
		return doc.Errorf("kind", "kind %q is not Agent", af.Kind)
	case af.Metadata.Name == "":
		return doc.Errorf("metadata.name", "metadata.name is required")
	case !ValidName(af.Metadata.Name):
		return doc.Errorf("metadata.name", "metadata.name %q may contain only letters, digits and hyphens", af.Metadata.Name)
	}
	return nil
}

func validateModel(doc *Doc, mf *modelFile) error {
	const p = "spec.model."
	m := &mf.Model
	if mf.MaxTokens != 0 {
		if m.MaxOutputTokens != 0 {
			return doc.Errorf(p+"max_tokens", "spec.model has both max_output_tokens and max_tokens, its older name; keep one")
		}
		if err := atLeast(doc, p+"max_tokens", mf.MaxTokens, 1); err != nil {
			return err
		}
		m.MaxOutputTokens = mf.MaxTokens
	}
	switch {
	case m.Provider == "":
		return doc.Errorf(p+"provider", "spec.model.provider is required (ollama, openai, anthropic or openrouter)")
	case m.Name == "":
		return doc.Errorf(p+"name", "spec.model.name is required")
	case m.Temperature != nil && !(*m.Temperature >= 0 && *m.Temperature <= 2): // also rejects NaN
		return doc.Errorf(p+"temperature", "spec.model.temperature %s is out of range 0..2", fmtFloat(*m.Temperature))
	}
	if err := oneOf(doc, p+"provider", m.Provider, "ollama", "openai", "anthropic", "openrouter"); err != nil {
		return err
	}
	if err := atLeast(doc, p+"max_input_tokens", m.MaxInputTokens, 0); err != nil {
		return err
	}
	if err := atLeast(doc, p+"max_output_tokens", m.MaxOutputTokens, 0); err != nil {
		return err
	}
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf(p+"base_url", "spec.model.base_url %q is not an http:// or https:// URL", m.BaseURL)
		}
	}
	return nil
}

func validateSession(doc *Doc, s *Session) error {
	const p = "spec.session."
	checks := []error{
		oneOf(doc, p+"on_disconnect", string(s.OnDisconnect), string(OnDisconnectPause), string(OnDisconnectContinue)),
		inRange(doc, p+"max_tool_iterations", s.MaxToolIterations, 1, 100),
		atLeast(doc, p+"llm_timeout_seconds", s.LLMTimeoutSeconds, 1),
		optAtLeast(doc, p+"ttl_hours", s.TTLHours, 0),
		optOneOf(doc, p+"compaction", s.Compaction, "discard", "archive", "disabled"),
		atLeast(doc, p+"daily_token_budget", s.DailyTokenBudget, 0),                 // 0: none
		atLeast(doc, p+"context.max_history_tokens", s.Context.MaxHistoryTokens, 0), // 0: no cap
		atLeast(doc, p+"context.max_tool_result_tokens", s.Context.MaxToolResultTokens, 1),
		oneOf(doc, p+"context.tool_result_truncation", s.Context.ToolResultTruncation, "head", "tail", "both"),
		atLeast(doc, p+"context.tool_result_keep_first", s.Context.ToolResultKeepFirst, 0),
		atLeast(doc, p+"context.tool_result_keep_last", s.Context.ToolResultKeepLast, 0),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// Bounds of spec.access: lists and numbers a gateway holds in memory.
const (
	maxAccessList    = 1000 // entries of an allowlist or of sender_overrides
	maxAccessPattern = 256  // bytes of one entry
	maxBufferedMsgs  = 200  // context_buffer.max_messages
	maxBufferHours   = 8760 // context_buffer.max_age_hours: a year
	maxQueuePending  = 1000
	maxDebounceMS    = 60000
	maxRejectMessage = 1000
)

func validateAccess(doc *Doc, a *Access) error {
	const p = "spec.access."
	g := &a.Groups
	checks := []error{
		oneOf(doc, p+"dm.policy", a.DM.Policy, "open", "allowlist", "disabled"),
		validatePatterns(doc, p+"dm.allowlist", a.DM.Allowlist),
		oneOf(doc, p+"groups.policy", g.Policy, "open", "allowlist", "disabled"),
		validatePatterns(doc, p+"groups.allowlist", g.Allowlist),
		oneOf(doc, p+"groups.sender_default", g.SenderDefault, SenderAllow, SenderPassive, SenderSilent, SenderBlock),
		validateOverrides(doc, p+"groups.sender_overrides", g.SenderOverrides),
		oneOf(doc, p+"groups.activation", g.Activation, "mention", "always"),
		oneOf(doc, p+"groups.context_buffer.mode", g.ContextBuffer.Mode, SenderSilent, SenderPassive),
		inRange(doc, p+"groups.context_buffer.max_messages", g.ContextBuffer.MaxMessages, 1, maxBufferedMsgs),
		inRange(doc, p+"groups.context_buffer.max_age_hours", g.ContextBuffer.MaxAgeHours, 1, maxBufferHours),
		oneOf(doc, p+"groups.queue.mode", g.Queue.Mode, QueueBatch, QueueSequential, QueueDrop),
		inRange(doc, p+"groups.queue.max_pending", g.Queue.MaxPending, 1, maxQueuePending),
		oneOf(doc, p+"groups.queue.overflow", g.Queue.Overflow, OverflowDropOld, OverflowDropNew, OverflowReject),
		maxLen(doc, p+"groups.queue.reject_message", g.Queue.RejectMessage, maxRejectMessage),
		inRange(doc, p+"groups.queue.debounce.window_ms", g.Queue.Debounce.WindowMS, 0, maxDebounceMS),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

func maxLen(doc *Doc, path, v string, n int) error {
	if len(v) <= n {
		return nil
	}
	return doc.Errorf(path, "%s is %d bytes long; shorten it to at most %d", path, len(v), n)
}

func validatePatterns(doc *Doc, path string, list []string) error {
	if len(list) > maxAccessList {
		return doc.Errorf(path, "%s has %d entries; keep it to %d (use \"prefix*\" patterns)", path, len(list), maxAccessList)
	}
	for i, e := range list {
		if err := validatePattern(doc, path+"["+strconv.Itoa(i)+"]", e); err != nil {
			return err
		}
	}
	return nil
}

func validatePattern(doc *Doc, path, e string) error {
	switch {
	case e == "" || len(e) > maxAccessPattern:
		return doc.Errorf(path, "%s must be 1 to %d bytes long", path, maxAccessPattern)
	case strings.Contains(strings.TrimSuffix(e, "*"), "*"):
		return doc.Errorf(path, "%s %q may have a \"*\" only at its end (exact id or \"prefix*\")", path, e)
	}
	return nil
}

func validateOverrides(doc *Doc, path string, m map[string]string) error {
	if len(m) > maxAccessList {
		return doc.Errorf(path, "%s has %d entries; keep it to %d (use \"prefix*\" patterns)", path, len(m), maxAccessList)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := validatePattern(doc, path+"."+k, k); err != nil {
			return err
		}
		if err := oneOf(doc, path+"."+k, m[k], SenderAllow, SenderPassive, SenderSilent, SenderBlock); err != nil {
			return err
		}
	}
	return nil
}

func validateTools(doc *Doc, tools []ToolRef) error {
	for i, t := range tools {
		p := "spec.tools[" + strconv.Itoa(i) + "]"
		switch {
		case t.Type == "":
			return doc.Errorf(p, "%s.type is required (builtin, cli, wasm or mcp)", p)
		case t.Name == "":
			return doc.Errorf(p, "%s.name is required", p)
		case t.Type == "cli" && t.Command == "":
			return doc.Errorf(p, "%s.command is required for a cli tool", p)
		case t.Type == "mcp" && t.Command == "" && t.URL == "":
			return doc.Errorf(p, "%s needs a command or a url for an mcp server", p)
		}
		if err := oneOf(doc, p+".type", t.Type, "builtin", "cli", "wasm", "mcp"); err != nil {
			return err
		}
		check := validateToolEnv
		if t.Type == "mcp" {
			check = ValidateMCP
		}
		if err := check(doc, p, &tools[i]); err != nil {
			return err
		}
		for j := range i {
			if tools[j].Name == t.Name && tools[j].Type == t.Type {
				return doc.Errorf(p+".name", "%s.name %q is already used by spec.tools[%d]", p, t.Name, j)
			}
		}
	}
	return nil
}

// ValidName reports whether name is a valid agent name: one or more ASCII
// letters, digits and hyphens.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// PlainName reports whether name is 1 to 64 of [a-z0-9_-] (with upper,
// A-Z too): what a tool folder of an agent may be called (with upper:
// what model APIs accept as a function name), or a webhook of agnx.yaml.
// A loop, not a regexp: a package regexp is compiled at every start (with
// {1,64}, 50 KB of it).
func PlainName(name string, upper bool) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || upper && c >= 'A' && c <= 'Z'
		if !ok {
			return false
		}
	}
	return true
}

func oneOf(doc *Doc, path, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return doc.Errorf(path, "%s %q is not one of %s", path, v, strings.Join(allowed, ", "))
}

// optOneOf is oneOf for a value that may be absent ("").
func optOneOf(doc *Doc, path, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	return oneOf(doc, path, v, allowed...)
}

// optAtLeast is atLeast for a value that may be absent (nil).
func optAtLeast(doc *Doc, path string, v *int, lo int) error {
	if v == nil {
		return nil
	}
	return atLeast(doc, path, *v, lo)
}

func inRange(doc *Doc, path string, v, lo, hi int) error {
	if v >= lo && v <= hi {
		return nil
	}
	return doc.Errorf(path, "%s %d is out of range %d..%d", path, v, lo, hi)
}

func atLeast(doc *Doc, path string, v, lo int) error {
	if v >= lo {
		return nil
	}
	return doc.Errorf(path, "%s %d must be at least %d", path, v, lo)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// validateMemory checks spec.memory; nil is absent. The backend is not
// checked here: an Agnx agent with a backend lite lacks still loads,
// without the memory tool (a warning says so).
func validateMemory(doc *Doc, m *Memory) error {
	if m == nil {
		return nil
	}
	const p = "spec.memory.embeddings."
	e := &m.Embeddings
	switch {
	case e.Provider == "" && (e.Model != "" || e.BaseURL != ""):
		return doc.Errorf(p+"provider", "spec.memory.embeddings needs a provider (%s)", strings.Join(EmbeddingProviders, ", "))
	case e.Provider == "":
		return nil
	case !slices.Contains(EmbeddingProviders, e.Provider):
		return doc.Errorf(p+"provider", "spec.memory.embeddings.provider %q is not one of %s", e.Provider, strings.Join(EmbeddingProviders, ", "))
	case e.Model == "":
		return doc.Errorf(p+"model", "spec.memory.embeddings.model is required: name the embedding model (e.g. nomic-embed-text)")
	}
	if e.BaseURL != "" {
		u, err := url.Parse(e.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf(p+"base_url", "spec.memory.embeddings.base_url %q is not an http:// or https:// URL", e.BaseURL)
		}
	}
	return nil
}
