package agents

import (
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// MCPServerName reports whether s may name an MCP server,
// [a-z0-9][a-z0-9_-]{0,31}: its name prefixes its tools' names
// (<server>__<tool>), which model APIs cap at 64 characters.
func MCPServerName(s string) bool {
	if s == "" || len(s) > 32 || s[0] == '_' || s[0] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Bounds of an MCP server entry, which may come with an imported agent.
const (
	maxMCPArgs     = 256
	maxMCPVars     = 64   // env and headers entries, each
	maxMCPValue    = 8192 // bytes of one arg, env or header value
	maxMCPReadOnly = 32
)

// ValidateMCP checks one MCP server entry (of spec.tools or of agnx.yaml's
// mcp.servers) found at path p in doc.
func ValidateMCP(doc *Doc, p string, t *ToolRef) error {
	if !MCPServerName(t.Name) {
		return doc.Errorf(p+".name", "%s.name %q must be 1 to 32 lowercase letters, digits, _ or -, starting with a letter or digit", p, t.Name)
	}
	if (t.Command == "") == (t.URL == "") {
		return doc.Errorf(p, "%s needs exactly one of command (a stdio server) and url (an http or sse server)", p)
	}
	switch {
	case t.Command != "" && t.Transport != "" && t.Transport != "stdio":
		return doc.Errorf(p+".transport", "%s.transport %q needs a url; a server with a command speaks stdio", p, t.Transport)
	case t.URL != "" && t.Transport == "stdio":
		return doc.Errorf(p+".transport", "%s.transport stdio needs a command; a url server speaks http or sse", p)
	}
	if err := optOneOf(doc, p+".transport", t.Transport, "stdio", "http", "sse"); err != nil {
		return err
	}
	if t.URL != "" {
		u, err := url.Parse(t.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(t.URL) > maxMCPValue {
			return doc.Errorf(p+".url", "%s.url is not an http:// or https:// URL", p)
		}
	}
	if t.Command != "" && (len(t.Command) > maxMCPValue || strings.ContainsRune(t.Command, 0)) {
		return doc.Errorf(p+".command", "%s.command is not a program path", p)
	}
	if err := validateMCPLists(doc, p, t); err != nil {
		return err
	}
	checks := []error{
		atLeast(doc, p+".timeout_seconds", t.TimeoutSeconds, 0),
		atLeast(doc, p+".idle_timeout_seconds", t.IdleTimeoutSeconds, 0),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

func validateMCPLists(doc *Doc, p string, t *ToolRef) error {
	if len(t.Args) > maxMCPArgs {
		return doc.Errorf(p+".args", "%s.args has %d entries; keep it to %d", p, len(t.Args), maxMCPArgs)
	}
	for i, a := range t.Args {
		if len(a) > maxMCPValue {
			return doc.Errorf(p+".args", "%s.args[%d] is longer than %d bytes", p, i, maxMCPValue)
		}
	}
	env := t.Env.Map()
	if len(env) > maxMCPVars || len(t.Headers) > maxMCPVars {
		return doc.Errorf(p, "%s has more than %d env or headers entries", p, maxMCPVars)
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !EnvName(k) || len(env[k]) > maxMCPValue {
			return doc.Errorf(p+".env", "%s.env %q must be a variable name (letters, digits, _) with a value of at most %d bytes", p, k, maxMCPValue)
		}
	}
	for k, v := range t.Headers {
		if k == "" || len(k) > 256 || len(v) > maxMCPValue || strings.ContainsAny(k+v, "\r\n\x00") {
			return doc.Errorf(p+".headers", "%s.headers %q is not a valid header (no line breaks, value at most %d bytes)", p, k, maxMCPValue)
		}
	}
	if t.URL != "" && (t.Env.Len() > 0 || len(t.Args) > 0 || len(t.ReadOnly) > 0 || t.Network) {
		return doc.Errorf(p, "%s is a url server: env, args, read_only and network are for a stdio server with a command; remove them", p)
	}
	if t.Command != "" && len(t.Headers) > 0 {
		return doc.Errorf(p+".headers", "%s.headers are for a url server; a stdio server gets env", p)
	}
	if len(t.ReadOnly) > maxMCPReadOnly {
		return doc.Errorf(p+".read_only", "%s.read_only has %d entries; keep it to %d", p, len(t.ReadOnly), maxMCPReadOnly)
	}
	for i, r := range t.ReadOnly {
		if r == "" || (!filepath.IsAbs(r) && !filepath.IsLocal(r)) {
			return doc.Errorf(p+".read_only", "%s.read_only[%d] %q must be an absolute path or a path inside the agent's folder", p, i, r)
		}
	}
	return nil
}

// EnvName reports whether s is an environment variable's name: letters,
// digits and _, not starting with a digit.
func EnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// validateToolEnv checks a non-MCP tool's env: a list of names.
func validateToolEnv(doc *Doc, p string, t *ToolRef) error {
	if t.Env.Values != nil {
		return doc.Errorf(p+".env", "%s.env of a %s tool is a list of variable names (from sandbox.env), not a mapping", p, t.Type)
	}
	for i, n := range t.Env.Names {
		if !EnvName(n) {
			return doc.Errorf(p+".env", "%s.env[%d] %q is not a variable name", p, i, n)
		}
	}
	return nil
}
