package config

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// maxGlobalMCP bounds agnx.yaml's mcp.servers.
const maxGlobalMCP = 64

// validateMCP checks mcp:. A global server's command is a program on PATH
// or an absolute path, and its read_only paths are absolute: there is no
// agent folder to resolve them against.
func (c *Config) validateMCP() error {
	m := &c.MCP
	if err := c.nonNegative(map[string]int{"mcp.idle_timeout_seconds": m.IdleTimeoutSeconds,
		"mcp.call_timeout_seconds": m.CallTimeoutSeconds}); err != nil {
		return err
	}
	for i, p := range m.ReadOnly {
		if !filepath.IsAbs(p) {
			return c.errorf("mcp.read_only", "mcp.read_only[%d] %q must be an absolute path", i, p)
		}
	}
	if len(m.Servers) > maxGlobalMCP {
		return c.errorf("mcp.servers", "mcp.servers has %d entries; keep it to %d", len(m.Servers), maxGlobalMCP)
	}
	for i := range m.Servers {
		s := &m.Servers[i]
		p := "mcp.servers[" + strconv.Itoa(i) + "]"
		if s.Type != "" && s.Type != "mcp" {
			return c.errorf(p+".type", "%s.type %q must be mcp or left out", p, s.Type)
		}
		s.Type = "mcp"
		if err := agents.ValidateMCP(c.doc, p, s); err != nil {
			return c.located(err)
		}
		if s.Command != "" && !filepath.IsAbs(s.Command) && strings.ContainsRune(s.Command, '/') {
			return c.errorf(p+".command", "%s.command %q must be a program on PATH or an absolute path", p, s.Command)
		}
		for j, r := range s.ReadOnly {
			if !filepath.IsAbs(r) {
				return c.errorf(p+".read_only", "%s.read_only[%d] %q must be an absolute path", p, j, r)
			}
		}
		for j := range i {
			if m.Servers[j].Name == s.Name {
				return c.errorf(p+".name", "%s.name %q is already used by mcp.servers[%d]", p, s.Name, j)
			}
		}
	}
	return nil
}

// located gives an *agents.Error from a check on c.doc the config's file
// name when the config came from none (defaults).
func (c *Config) located(err error) error {
	if e, ok := err.(*agents.Error); ok && e.File == "" {
		e.File = c.File
	}
	return err
}
