package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/runtime"
)

const mcpUsage = "mcp list AGENT [--connect] | test AGENT [SERVER] [--call TOOL --args JSON]"

// runMCP lists an agent's MCP servers and their tools, or tests them:
// connect, initialize, list, and call one tool. It reaches the servers as
// the daemon would (same sandbox, same entries), in this process.
func runMCP(g *globals, args []string) error {
	fs := g.flags("mcp")
	connect := fs.Bool("connect", false, "list: start the servers even when their tool lists are cached")
	call := fs.String("call", "", "test: the tool to call (its MCP name, or SERVER__TOOL)")
	callArgs := fs.String("args", "{}", "test: the call's arguments, a JSON object")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) < 2 || (rest[0] != "list" && rest[0] != "test") || len(rest) > 3 || (rest[0] == "list" && len(rest) > 2) {
		return usagef("say: %s", mcpUsage)
	}
	if *call != "" && !json.Valid([]byte(*callArgs)) {
		return usagef("--args is not JSON: give an object, e.g. --args '{\"text\": \"hi\"}'")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	a, err := mcpAgent(cfg, rest[1])
	if err != nil {
		return err
	}
	p, err := doctor.OpenMCPProbe(cfg, a, rest[0] == "list" && !*connect, g.logger())
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if rest[0] == "list" {
		return mcpList(ctx, g, p, rest[1])
	}
	server := ""
	if len(rest) == 3 {
		server = rest[2]
	}
	return mcpTest(ctx, g, p, rest[1], server, *call, []byte(*callArgs))
}

// mcpAgent loads the agent whose MCP servers mcp reaches.
func mcpAgent(cfg *config.Config, name string) (*agents.Agent, error) {
	dir := filepath.Join(cfg.AgentsDir, name)
	if _, err := os.Stat(filepath.Join(dir, agents.FileName)); !agents.ValidName(name) || errors.Is(err, fs.ErrNotExist) {
		return nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	return agents.Load(dir)
}

func mcpList(ctx context.Context, g *globals, p *doctor.MCPProbe, agent string) error {
	servers := p.Servers()
	if len(servers) == 0 {
		fmt.Fprintf(g.stdout, "agent %s has no MCP servers: add one to spec.tools (type: mcp) or to mcp.servers in agnx.yaml\n", agent)
		return nil
	}
	for _, s := range servers {
		ts, warns, err := p.Tools(ctx, s.Name)
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "%s (%s)\n", s.Name, describeServer(s.Transport, s.Command, s.Args, s.URL))
		for _, w := range warns {
			fmt.Fprintf(g.stdout, "  ! %s\n", w)
		}
		for _, t := range ts {
			fmt.Fprintf(g.stdout, "  %s\t%s\n", t.Spec().Name, firstLine(t.Spec().Description))
		}
	}
	return nil
}

// mcpTest connects to one server (or each), lists its tools and calls one
// when asked; any failure is an error (exit 1) with the sentence.
func mcpTest(ctx context.Context, g *globals, p *doctor.MCPProbe, agent, server, call string, args []byte) error {
	var names []string
	for _, s := range p.Servers() {
		if server == "" || s.Name == server {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		if server != "" {
			_, _, err := p.Tools(ctx, server) // says which servers there are
			return err
		}
		return fmt.Errorf("agent %s has no MCP servers: add one to spec.tools (type: mcp) or to mcp.servers in agnx.yaml", agent)
	}
	if call != "" && len(names) > 1 {
		return usagef("--call needs the SERVER: say mcp test %s SERVER --call %s", agent, call)
	}
	var failed []string
	for _, name := range names {
		start := time.Now()
		ts, warns, err := p.Tools(ctx, name)
		if err != nil {
			return err
		}
		if len(ts) == 0 && len(warns) > 0 {
			fmt.Fprintf(g.stdout, "FAIL  %s: %s\n", name, strings.Join(warns, "; "))
			failed = append(failed, name)
			continue
		}
		fmt.Fprintf(g.stdout, "ok    %s: %d tools in %s\n", name, len(ts), time.Since(start).Round(time.Millisecond))
		for _, w := range warns {
			fmt.Fprintf(g.stdout, "  ! %s\n", w)
		}
		if call != "" {
			return mcpCall(ctx, g, ts, name, call, args)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("MCP server %s could not be reached: see the line above for why", strings.Join(failed, ", "))
	}
	return nil
}

// mcpCall calls the tool named call (TOOL or SERVER__TOOL) and prints its
// result.
func mcpCall(ctx context.Context, g *globals, ts []runtime.Tool, server, call string, args []byte) error {
	var have []string
	for _, t := range ts {
		name := t.Spec().Name
		have = append(have, name)
		if name != call && name != server+"__"+call && !invokes(t, server+":"+call) {
			continue
		}
		res, err := t.Run(ctx, args)
		if err != nil {
			return fmt.Errorf("calling %s failed: %w", name, err)
		}
		fmt.Fprintln(g.stdout, res.Content)
		if len(res.Details) > 0 {
			fmt.Fprintf(g.stdout, "details: %s\n", res.Details)
		}
		if res.IsError {
			return errors.New("the tool reported a failure: its answer is above")
		}
		return nil
	}
	return fmt.Errorf("MCP server %s has no tool %q (it has: %s)", server, call, strings.Join(have, ", "))
}

// invokes reports whether t is the MCP tool with that invocation
// ("server:tool"), whatever its model-facing name became.
func invokes(t runtime.Tool, inv string) bool {
	i, ok := t.(interface{ Invocation() string })
	return ok && i.Invocation() == inv
}

func describeServer(transport, command string, args []string, url string) string {
	if url != "" {
		return transport + " " + url
	}
	return strings.TrimSpace("stdio " + command + " " + strings.Join(args, " "))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}
