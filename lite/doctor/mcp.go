package doctor

import (
	"context"
	"fmt"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// mcpChecks lists each agent's MCP servers (its own and agnx.yaml's): is
// the entry acceptable, is the command there, does the url answer; and,
// when the daemon runs, the server's state and memory there. No server is
// started.
func mcpChecks(ctx context.Context, cfg *config.Config, list []*agents.Agent) []Check {
	running := daemonMCP(ctx, cfg)
	var out []Check
	for _, a := range list {
		refs, own := toolset.MCPEntries(cfg, a)
		for i, ref := range refs {
			name := "mcp " + a.Name + "/" + ref.Name
			s, err := toolset.MCPServer(cfg, a, ref, own[i])
			if err != nil {
				out = append(out, Check{Name: name, Status: "fail", Detail: err.Error(), Fix: "fix the entry, or the agent will not load"})
				continue
			}
			c := mcpReach(ctx, s.Command, s.URL, ref.AllowPrivate || !own[i])
			c.Name = name
			if st, ok := running.servers[a.Name+"/"+ref.Name]; ok {
				c.Detail += "; in the daemon: " + st
			} else if running.err != nil {
				c.Detail += "; in the daemon: not known (" + running.err.Error() + ")"
			}
			out = append(out, c)
		}
	}
	return out
}

// mcpReach checks that a stdio server's program exists or that a url
// server answers at all (any HTTP status).
func mcpReach(ctx context.Context, command, url string, private bool) Check {
	if command != "" {
		if filepath.IsAbs(command) {
			return ok("", "stdio: "+command)
		}
		p, err := exec.LookPath(command)
		if err != nil {
			return Check{Status: "warn", Detail: fmt.Sprintf("stdio: %s is not on this host's PATH, so the server cannot start", command),
				Fix: "install it (npx and node come with Node.js, uvx with uv) or give an absolute path"}
		}
		return ok("", "stdio: "+command+" ("+p+")")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	status, err := toolset.ReachMCP(ctx, url, private)
	if err == nil {
		return ok("", fmt.Sprintf("%s answers (HTTP %d)", url, status))
	}
	return Check{Status: "warn", Detail: fmt.Sprintf("%s does not answer: %v", url, err), Fix: "check the url and that the server runs"}
}

// daemonState is what the running daemon says of its MCP servers.
type daemonState struct {
	servers map[string]string // each server's state, by "agent/server"
	err     error             // why a running daemon did not say
}

// daemonStatusTimeout bounds asking the daemon: it answers at once, but a
// Pi under load (or the tests under qemu on a loaded machine) can take
// seconds.
const daemonStatusTimeout = 15 * time.Second

// daemonMCP is each MCP server's state in the running daemon; no servers
// and no error when no daemon runs.
func daemonMCP(ctx context.Context, cfg *config.Config) daemonState {
	d := config.ReadDaemon(cfg)
	if d == nil {
		return daemonState{}
	}
	ctx, cancel := context.WithTimeout(ctx, daemonStatusTimeout)
	defer cancel()
	st, err := httpapi.NewClient(d.URL, httpapi.ClientOptions{AdminToken: cfg.Server.AdminToken.Value()}).Status(ctx)
	if err != nil {
		return daemonState{err: fmt.Errorf("the daemon did not answer: %w", err)}
	}
	out := map[string]string{}
	for _, m := range st.MCPServers {
		s := m.State
		if m.State == "running" {
			s += fmt.Sprintf(" (pid %d, %.1f MiB)", m.PID, float64(m.RSSBytes)/(1<<20))
		}
		if m.LastError != "" {
			s += ", last error: " + strings.TrimSpace(m.LastError)
		}
		out[m.Agent+"/"+m.Server] = s
	}
	return daemonState{servers: out}
}
