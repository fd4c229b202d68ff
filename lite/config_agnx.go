package lite

import (
	"path/filepath"
	"slices"
)

// agnxKeys records which keys a file sets where Agnx's default differs from
// the zero value agnx-lite decodes.
type agnxKeys struct {
	Gateways struct {
		Telegram *struct {
			Enabled *bool `yaml:"enabled"`
		} `yaml:"telegram"`
	} `yaml:"gateways"`
	Runtime struct {
		DefaultAgent *string `yaml:"default_agent"`
	} `yaml:"runtime"`
}

// applyAgnx gives a file's Agnx keys Agnx's meaning: a gateways.telegram
// block is enabled unless it says otherwise, sandbox.mode bubblewrap is
// bwrap, and routing drops what no route matches unless the file names
// runtime.default_agent. Keys accepted but handled differently are added
// to Warnings.
func (c *Config) applyAgnx(seen *agnxKeys) {
	if tg := seen.Gateways.Telegram; tg != nil && tg.Enabled == nil {
		c.Gateways.Telegram.Enabled = true
	}
	if c.Sandbox.Mode == "bubblewrap" {
		c.Sandbox.Mode = "bwrap"
	}
	c.RouteFallback = ""
	if seen.Runtime.DefaultAgent != nil {
		c.RouteFallback = c.Runtime.DefaultAgent
	}
	warn := func(path, msg string) {
		c.Warnings = append(c.Warnings, c.errorf(path, "%s", msg).Error())
	}
	if c.Services.Session.Path != "" {
		warn("services.session.path", "services.session.path is accepted but unused: agnx-lite keeps every session in agnx.db in the workspace (bring Agnx sessions in with agnx-lite session import)")
	}
	if c.Sessions.TTLHours > 0 {
		warn("sessions.ttl_hours", "sessions.ttl_hours is accepted but agnx-lite does not expire sessions yet: they stay until deleted (agnx-lite session delete)")
	}
	if c.Sessions.Compaction != "" {
		warn("sessions.compaction", "sessions.compaction is accepted but unused: agnx-lite keeps each session's log in its database, with checkpoints")
	}
	if c.Gateways.Discord != nil {
		warn("gateways.discord", "gateways.discord is ignored: agnx-lite has no built-in Discord gateway (run one as a gateways.external plugin)")
	}
	if c.RouteFallback == "" && c.gatewaysOn() && !slices.ContainsFunc(c.Routes, func(r Route) bool { return r.Match == RouteMatch{} }) {
		warn("routes", "messages from gateways that no route matches are dropped, as in Agnx: add a route with match: {} or set runtime.default_agent")
	}
}

// gatewaysOn reports whether a gateway besides the HTTP API is configured,
// the only kind that is routed.
func (c *Config) gatewaysOn() bool {
	return c.Gateways.Telegram.Enabled || len(c.Gateways.External) > 0
}

// agnxLayout reports whether a config file given with -c follows Agnx's
// layout: any file but agnx-lite's own agnx.yaml (a duragent.yaml), whose
// workspace defaults to .duragent beside it.
func agnxLayout(file string) bool {
	return file != "" && filepath.Base(file) != "agnx.yaml"
}

// DefaultAgnxWorkspace is Agnx's workspace, relative to its config file.
const DefaultAgnxWorkspace = ".duragent"
