package lite

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// toolFactory turns an agent's spec.tools into tools: the one place that
// knows the concrete tool types.
type toolFactory struct {
	sandboxes *sandboxes
	log       *slog.Logger
	wasm      *wasmEngine
	search    *tools.WebSearch // the web tool's search backend
	// sessions is what the session tool reads; nil outside a daemon.
	sessions tools.SessionStore
	// shared is the folder whose tools/ every agent gets (Agnx's
	// {workspace}/tools: the data dir's); "" for none.
	shared string
	// mcp builds the tools of MCP servers; with checkOnly, the entries are
	// checked but no server is started or listed (agent validate).
	mcp       *mcpHost
	checkOnly bool
}

// builtins are the built-in tools by name: Agnx's (bash, web, session,
// reload_tools) and lite's own file tools.
var builtins = []string{"bash", "web", "session", "reload_tools", "read_file", "write_file", "edit_file", "list_dir", "glob", "grep"}

// agnxOnly are Agnx built-ins this build does not have; an Agnx agent
// that lists them still loads, without them, with a warning.
var agnxOnly = map[string]bool{"schedule": true, "background_process": true, "memory": true,
	"recall": true, "remember": true, "reflect": true}

// build returns the agent's tools. On error, the tools built so far are
// closed.
func (f *toolFactory) build(a *agents.Agent) (out []runtime.Tool, err error) {
	defer func() {
		if err != nil {
			closeTools(out)
			out = nil
		}
	}()
	if a.Memory.Backend != "" {
		// as for a listed built-in this build does not have
		a.Warnings = append(a.Warnings, "spec.memory asks for the memory tool, which this build does not have yet: the agent runs without it")
	}
	manifests := map[string]bool{}
	for _, ref := range a.Tools {
		switch ref.Type {
		case "wasm":
			t, err := f.wasm.load(a, wasmManifest(a, ref), ref.Name)
			if err != nil {
				return out, err
			}
			manifests[t.Manifest().File] = true
			out = append(out, t)
		case "builtin":
			t, err := f.builtin(a, ref)
			if err != nil {
				return out, err
			}
			if t != nil {
				out = append(out, t)
			}
		case "cli":
			t, err := f.cli(a, ref)
			if err != nil {
				return out, err
			}
			if t != nil {
				out = append(out, t)
			}
		case "mcp":
			// with agnx.yaml's servers, below
		default:
			return out, fmt.Errorf("tools of type %q are not supported by this build yet: remove %q from spec.tools", ref.Type, ref.Name)
		}
	}
	found, err := f.wasm.discover(a, manifests)
	if out = append(out, found...); err != nil {
		return out, err
	}
	if f.checkOnly {
		_, err = f.mcp.servers(a)
	} else {
		found, err = f.mcp.tools(a)
		out = append(out, found...)
	}
	if err != nil {
		return out, err
	}
	taken := map[string]bool{}
	for _, t := range out {
		taken[strings.ToLower(t.Spec().Name)] = true
	}
	s := f.discoverCLI(a, taken)
	a.Warnings = append(a.Warnings, s.warns...)
	// The tool folders are watched as the agent's other files are: a
	// change rebuilds the agent when its next turn starts.
	a.Files = append(a.Files, s.watch...)
	for _, p := range s.watch {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(a.ModTime) {
			a.ModTime = st.ModTime()
		}
	}
	return append(out, s.tools...), nil
}

func (f *toolFactory) builtin(a *agents.Agent, ref agents.ToolRef) (runtime.Tool, error) {
	ws := a.Workspace
	switch strings.ToLower(ref.Name) {
	case "bash":
		return &tools.Bash{Sandbox: f.sandboxes.forAgent(ws, ref.Network), MaxTimeout: seconds(ref.TimeoutSeconds, 0)}, nil
	case "read_file":
		return &tools.ReadFile{Workspace: ws}, nil
	case "write_file":
		return f.sandboxes.capped(ws, &tools.WriteFile{Workspace: ws}), nil
	case "edit_file":
		return f.sandboxes.capped(ws, &tools.EditFile{Workspace: ws}), nil
	case "list_dir":
		return &tools.ListDir{Workspace: ws}, nil
	case "glob":
		return &tools.Glob{Workspace: ws}, nil
	case "grep":
		return &tools.Grep{Workspace: ws}, nil
	case "web":
		return &tools.Web{AllowPrivate: ref.AllowPrivate, Search: f.search}, nil
	case "session":
		return tools.Session{Store: f.sessions}, nil
	case "reload_tools":
		return &tools.ReloadTools{Scan: func() tools.ToolScan { return f.discoverCLI(a, nil).scan }}, nil
	}
	if agnxOnly[strings.ToLower(ref.Name)] {
		f.log.Warn("agent lists an Agnx built-in tool this build does not have; it is left out", "agent", a.Name, "tool", ref.Name)
		a.Warnings = append(a.Warnings, fmt.Sprintf("spec.tools lists the built-in tool %q, which this build does not have: "+
			"the agent runs without it; remove it from spec.tools to silence this", ref.Name))
		return nil, nil
	}
	return nil, fmt.Errorf("there is no built-in tool %q (available: %s): fix spec.tools in %s",
		ref.Name, strings.Join(builtins, ", "), filepath.Join(a.Dir, agents.FileName))
}
