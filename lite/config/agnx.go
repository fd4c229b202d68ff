package config

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
	Sessions struct {
		TTLHours *int `yaml:"ttl_hours"`
	} `yaml:"sessions"`
}

// AgnxTTLHours is sessions.ttl_hours in a duragent.yaml that leaves it
// out: Agnx's default, a week.
const AgnxTTLHours = 168

// applyAgnx gives a file's Agnx keys Agnx's meaning: a gateways.telegram
// block is enabled unless it says otherwise, sandbox.mode bubblewrap is
// bwrap, and routing drops what no route matches unless the file names
// runtime.default_agent, and a duragent.yaml without sessions.ttl_hours
// ends sessions idle for a week, as Agnx does. Keys accepted but handled
// differently are added to Warnings.
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
	if seen.Sessions.TTLHours == nil && agnxLayout(c.File) {
		c.Sessions.TTLHours = AgnxTTLHours
	}
	if c.Gateways.Discord != nil {
		warn("gateways.discord", "gateways.discord is ignored: agnx-lite has no built-in Discord gateway (run one as a gateways.external plugin)")
	}
	if c.RouteFallback == "" && c.GatewaysOn() && !slices.ContainsFunc(c.Routes, func(r Route) bool { return r.Match == RouteMatch{} }) {
		warn("routes", "messages from gateways that no route matches are dropped, as in Agnx: add a route with match: {} or set runtime.default_agent")
	}
}

// GatewaysOn reports whether a gateway besides the HTTP API is configured,
// the only kind that is routed.
func (c *Config) GatewaysOn() bool {
	return c.Gateways.Telegram.Enabled || len(c.Gateways.External) > 0
}

// agnxLayout reports whether a config file given with -c follows Agnx's
// layout: any file but agnx-lite's own agnx.yaml (a duragent.yaml), whose
// workspace defaults to .duragent beside it.
func agnxLayout(file string) bool {
	return file != "" && filepath.Base(file) != "agnx.yaml"
}

// FileMissing reports whether File, an Agnx duragent.yaml given with -c,
// does not exist: Locate then applied the defaults, as Agnx does.
func (c *Config) FileMissing() bool { return c.missing }

// DefaultAgnxWorkspace is Agnx's workspace, relative to its config file.
const DefaultAgnxWorkspace = ".duragent"
