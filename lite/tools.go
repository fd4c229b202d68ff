package lite

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

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
}

// builtins are the built-in tools by name.
var builtins = []string{"bash", "read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "web", "session"}

// agnxOnly are Agnx built-ins this build does not have; an Agnx agent
// that lists them still loads, without them.
var agnxOnly = map[string]bool{"schedule": true, "reload_tools": true, "recall": true, "remember": true, "reflect": true}

// build returns the agent's tools. On error, the tools built so far are
// closed.
func (f *toolFactory) build(a *agents.Agent) (out []runtime.Tool, err error) {
	defer func() {
		if err != nil {
			closeTools(out)
			out = nil
		}
	}()
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
			out = append(out, t)
		default:
			return out, fmt.Errorf("tools of type %q are not supported by this build yet: remove %q from spec.tools", ref.Type, ref.Name)
		}
	}
	found, err := f.wasm.discover(a, manifests)
	return append(out, found...), err
}

func (f *toolFactory) builtin(a *agents.Agent, ref agents.ToolRef) (runtime.Tool, error) {
	ws := a.Workspace
	switch ref.Name {
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
		return &tools.Web{AllowPrivate: ref.AllowPrivate}, nil
	case "session":
		return tools.Session{}, nil
	}
	if agnxOnly[ref.Name] {
		f.log.Warn("agent lists an Agnx built-in tool this build does not have; it is left out", "agent", a.Name, "tool", ref.Name)
		return nil, nil
	}
	return nil, fmt.Errorf("there is no built-in tool %q (available: %s): fix spec.tools in %s",
		ref.Name, strings.Join(builtins, ", "), filepath.Join(a.Dir, agents.FileName))
}

// cli builds an Agnx CLI tool: its README, if any, becomes part of the
// description the model reads.
func (f *toolFactory) cli(a *agents.Agent, ref agents.ToolRef) (runtime.Tool, error) {
	cmd := filepath.Join(a.Dir, ref.Command)
	st, err := a.StatFile(ref.Command)
	if errors.Is(err, agents.ErrOutside) {
		return nil, fmt.Errorf("cli tool %q: %s %v: a tool may run only a file inside its agent's folder", ref.Name, cmd, agents.ErrOutside)
	}
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("cli tool %q: %s is not an executable file: check spec.tools command and its permissions (chmod +x)", ref.Name, cmd)
	}
	desc := ref.Description
	if ref.Readme != "" {
		// Through the agent's folder: the readme goes to the model.
		data, err := a.ReadFile(ref.Readme)
		if err != nil {
			return nil, fmt.Errorf("cli tool %q: cannot read its readme %s: %v", ref.Name, filepath.Join(a.Dir, ref.Readme), err)
		}
		desc = strings.TrimSpace(desc + "\n\n" + string(data))
	}
	if desc == "" {
		desc = "Run the " + ref.Name + " tool; it takes its arguments as a JSON object."
	}
	return &tools.CLI{Name: ref.Name, Description: desc, Command: cmd, Dir: filepath.Dir(cmd),
		Sandbox: f.sandboxes.forAgent(a.Workspace, ref.Network), Timeout: seconds(ref.TimeoutSeconds, 60*time.Second)}, nil
}
