package config

import (
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// expandEnv replaces ${VAR} and ${VAR:-default} in a config value with the
// environment's values and $$ with $; any other $ stays as written, and so
// does ${env:VAR}, which an MCP server's env and headers read when the
// server starts. As in
// Agnx, the default applies only when VAR is unset (a VAR set to "" stays
// empty); an unset VAR without one is an error at line. Values are
// expanded once: a default or a value holding ${...} is not expanded
// again (no nesting). Only scalars are expanded, so comments never are.
// Errors name variables, never their values.
func expandEnv(file string, line int, s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	fail := func(msg string) (string, error) {
		return "", &agents.Error{File: file, Line: line, Msg: msg}
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			s = s[i+2:]
			continue
		case '{':
		default:
			b.WriteByte('$')
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return fail(`"${" is not closed by "}" (write $$ for a literal dollar)`)
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		if strings.HasPrefix(ref, "env:") {
			// an MCP server's reference, read when the server starts
			b.WriteString("${" + ref + "}")
			continue
		}
		name, def, hasDef := strings.Cut(ref, ":-")
		if !agents.EnvName(name) {
			return fail("${" + ref + "} is not a valid reference: use ${VAR} or ${VAR:-default}")
		}
		v, ok := lookup(name)
		switch {
		case hasDef && !ok:
			v = def
		case !ok:
			return fail("environment variable " + name + " is not set (use ${" + name + ":-default} for a default)")
		}
		b.WriteString(v)
	}
}
