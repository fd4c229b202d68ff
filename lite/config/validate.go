package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/webaddr"
)

// Validate checks the values of c. Errors are *agents.Error, at the line of
// the offending key when c came from a file. Secrets are never quoted.
func (c *Config) Validate() error {
	for _, check := range []func() error{c.validateServer, c.validateSessions,
		c.validateGateways, c.validateRoutes, c.validateRuntime, c.validateWeb, c.validateMCP, c.validateHooks,
		c.validateScheduler, c.validatePrices, c.validateSubagents, c.validateWorkers, c.validateTasks, c.validateWorldMemory} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// errorf returns an *agents.Error at the line of path in c's file.
func (c *Config) errorf(path, format string, args ...any) error {
	return &agents.Error{File: c.File, Line: c.doc.Line(path), Msg: fmt.Sprintf(format, args...)}
}

func (c *Config) validateServer() error {
	s := &c.Server
	switch {
	case s.Host == "":
		return c.errorf("server.host", "server.host must not be empty (use 127.0.0.1, or 0.0.0.0 for every interface)")
	case s.Port < 1 || s.Port > 65535:
		return c.errorf("server.port", "server.port %d is out of range 1..65535", s.Port)
	}
	if path, msg := s.tokenProblem(); msg != "" {
		return c.errorf(path, "%s", msg)
	}
	if err := c.validateServerLists(); err != nil {
		return err
	}
	return c.nonNegative(map[string]int{
		"server.request_timeout_seconds":     s.RequestTimeoutSeconds,
		"server.idle_timeout_seconds":        s.IdleTimeoutSeconds,
		"server.keep_alive_interval_seconds": s.KeepAliveIntervalSeconds,
		"server.max_connections":             s.MaxConnections,
		"server.max_connections_per_client":  s.MaxConnectionsPerClient,
		"server.max_streams":                 s.MaxStreams,
	})
}

// validateServerLists checks allowed_hosts, trusted_proxies,
// allowed_origins and public_agents.
func (c *Config) validateServerLists() error {
	s := &c.Server
	if len(s.TrustedProxies) > maxTrustedProxies {
		return c.errorf("server.trusted_proxies", "server.trusted_proxies lists %d entries, more than %d: name ranges (e.g. 10.0.0.0/8) rather than each address",
			len(s.TrustedProxies), maxTrustedProxies)
	}
	for i, p := range s.TrustedProxies {
		if _, ok := webaddr.ParseProxy(p); !ok {
			k := "server.trusted_proxies[" + strconv.Itoa(i) + "]"
			return c.errorf(k, "%s %q is not the address or CIDR range of a proxy: write e.g. 127.0.0.1 or 10.0.0.0/8 (not every address)", k, p)
		}
	}
	for i, h := range s.AllowedHosts {
		if webaddr.NormalizeHost(h) == "" {
			p := "server.allowed_hosts[" + strconv.Itoa(i) + "]"
			return c.errorf(p, "%s %q is not a host name or IP address: write the name alone, without scheme or port (e.g. pi.local)", p, h)
		}
	}
	for i, o := range s.AllowedOrigins {
		if webaddr.NormalizeOrigin(o) == "" {
			p := "server.allowed_origins[" + strconv.Itoa(i) + "]"
			return c.errorf(p, "%s %q is not a web origin: write scheme://host[:port] with nothing after it (e.g. https://app.example)", p, o)
		}
	}
	for i, a := range s.PublicAgents {
		if !agents.ValidName(a) {
			p := "server.public_agents[" + strconv.Itoa(i) + "]"
			return c.errorf(p, "%s %q is not a valid agent name (letters, digits and hyphens)", p, a)
		}
	}
	return nil
}

func (c *Config) validateSessions() error {
	if err := c.nonNegative(map[string]int{"sessions.ttl_hours": c.Sessions.TTLHours,
		"sessions.daily_token_budget": c.Sessions.DailyTokenBudget}); err != nil {
		return err
	}
	if c.Sessions.Compaction == "" {
		return nil
	}
	return c.oneOf("sessions.compaction", c.Sessions.Compaction, "discard", "archive", "disabled")
}

func (c *Config) validateGateways() error {
	tg := &c.Gateways.Telegram
	if tg.Enabled && tg.BotToken == "" {
		return c.errorf("gateways.telegram", "gateways.telegram.bot_token is required when telegram is enabled (e.g. bot_token: ${TELEGRAM_BOT_TOKEN})")
	}
	if tg.APIBaseURL != "" && !httpURL(tg.APIBaseURL) {
		return c.errorf("gateways.telegram.api_base_url", "gateways.telegram.api_base_url %q is not an http:// or https:// URL", tg.APIBaseURL)
	}
	for i, g := range c.Gateways.External {
		p := "gateways.external[" + strconv.Itoa(i) + "]"
		switch {
		case g.Name == "":
			return c.errorf(p, "%s.name is required", p)
		case !agents.ValidName(g.Name):
			return c.errorf(p+".name", "%s.name %q may contain only letters, digits and hyphens", p, g.Name)
		case g.Name == "telegram" && tg.Enabled:
			return c.errorf(p+".name", "%s.name %q is taken by the built-in telegram gateway", p, g.Name)
		case g.Command == "":
			return c.errorf(p, "%s.command is required", p)
		}
		for j := range i {
			if c.Gateways.External[j].Name == g.Name {
				return c.errorf(p+".name", "%s.name %q is already used by gateways.external[%d]", p, g.Name, j)
			}
		}
		if err := c.oneOf(p+".restart", g.Restart, "always", "on_failure", "never"); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateRoutes() error {
	for i, r := range c.Routes {
		p := "routes[" + strconv.Itoa(i) + "]"
		switch {
		case r.Agent == "":
			return c.errorf(p, "%s has no agent (add agent: NAME)", p)
		case !agents.ValidName(r.Agent):
			return c.errorf(p+".agent", "%s.agent %q is not a valid agent name (letters, digits and hyphens)", p, r.Agent)
		}
	}
	return nil
}

func (c *Config) validateRuntime() error {
	r := &c.Runtime
	if err := c.oneOf("wasm.mode", c.Wasm.Mode, "auto", "compiler", "interpreter"); err != nil {
		return err
	}
	if err := c.validateSandbox(); err != nil {
		return err
	}
	switch {
	case r.DefaultAgent == "":
		return c.errorf("runtime.default_agent", "runtime.default_agent must not be empty")
	case !agents.ValidName(r.DefaultAgent):
		return c.errorf("runtime.default_agent", "runtime.default_agent %q is not a valid agent name (letters, digits and hyphens)", r.DefaultAgent)
	}
	for _, f := range []struct {
		path string
		v    int
	}{
		{"runtime.max_concurrent_turns", r.MaxConcurrentTurns},
		{"runtime.max_concurrent_tools", r.MaxConcurrentTools},
		{"runtime.session_idle_seconds", r.SessionIdleSeconds},
		{"runtime.max_loaded_agents", r.MaxLoadedAgents},
	} {
		if f.v < 1 {
			return c.errorf(f.path, "%s %d must be at least 1", f.path, f.v)
		}
	}
	return c.nonNegative(map[string]int{"runtime.memory_limit_mb": r.MemoryLimitMB, "runtime.db_reserve_mb": r.DBReserveMB,
		"runtime.approval_timeout_seconds": r.ApprovalTimeoutSeconds})
}

// nonNegative reports the first negative value in document order.
func (c *Config) nonNegative(fields map[string]int) error {
	var bad []string
	for path, v := range fields {
		if v < 0 {
			bad = append(bad, path)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.SortFunc(bad, func(a, b string) int { return c.doc.Line(a) - c.doc.Line(b) })
	return c.errorf(bad[0], "%s %d must not be negative", bad[0], fields[bad[0]])
}

func (c *Config) oneOf(path, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return c.errorf(path, "%s %q is not one of %s", path, v, strings.Join(allowed, ", "))
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (c *Config) validateSandbox() error {
	sb := &c.Sandbox
	if sb.Mode == "docker" {
		return c.errorf("sandbox.mode", "sandbox.mode docker is not supported by agnx-lite: use bubblewrap (tools confined, no container daemon) or trust")
	}
	if err := c.oneOf("sandbox.mode", sb.Mode, "bwrap", "trust"); err != nil {
		return err
	}
	if _, _, err := ParseRunAs(sb.RunAs); err != nil {
		return c.errorf("sandbox.run_as", "sandbox.run_as %q %v", sb.RunAs, err)
	}
	if sb.TmpMB < 1 {
		return c.errorf("sandbox.tmp_mb", "sandbox.tmp_mb %d must be at least 1", sb.TmpMB)
	}
	if err := c.oneOf("sandbox.network_helper", sb.NetworkHelper, "auto", bwrap.Slirp4netns, bwrap.Pasta); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(sb.Env)) {
		if !agents.EnvName(name) {
			return c.errorf("sandbox.env", "sandbox.env names %q, which is not a variable name: use letters, digits and _, not starting with a digit", name)
		}
	}
	return c.nonNegative(map[string]int{"sandbox.workspace_mb": sb.WorkspaceMB})
}
