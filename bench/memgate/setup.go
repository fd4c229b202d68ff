package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// The workload's WASM tool, built from echo.wat (make echo-wasm); the test
// holds echo.wasm to its source.
var (
	//go:embed echo.wasm
	echoWasm []byte
	//go:embed tool.yaml
	echoManifest []byte
)

// setup says how the data dir is laid out.
type setup struct {
	agents    int
	wasmMode  string
	maxConns  int
	turnLimit int
	loaded    int
	// memLimitMB is runtime.memory_limit_mb; < 0 leaves the default.
	memLimitMB int
	// mcpServer is the MCP server's binary the MCP agents declare; ""
	// for none.
	mcpServer string
	// act gives every agent a heartbeat and the schedule and
	// background_process tools, and the daemon a webhook (act.go).
	act bool
}

// config is agnx.yaml for the workload. The gate keeps the memory guard's
// default: a turn it sheds is a failed turn.
func (s setup) config() string {
	guard := ""
	if s.memLimitMB >= 0 {
		guard = fmt.Sprintf("  memory_limit_mb: %d\n", s.memLimitMB)
	}
	hooks := ""
	if s.act {
		hooks = hookConfig()
	}
	return fmt.Sprintf(`server:
  max_connections: %d
sandbox:
  mode: bwrap
wasm:
  mode: %s
mcp:
  idle_timeout_seconds: %d
runtime:
  default_agent: agent-000
  max_loaded_agents: %d
  max_concurrent_turns: %d
%s%s`, s.maxConns, s.wasmMode, mcpIdleSeconds, s.loaded, s.turnLimit, guard, hooks)
}

// write fills home with agnx.yaml and the agents.
func (s setup) write(home string) error {
	if err := os.WriteFile(filepath.Join(home, "agnx.yaml"), []byte(s.config()), 0o600); err != nil {
		return err
	}
	dir := filepath.Join(home, "agents")
	for i := range s.agents {
		tools := memorySpec + workloadTools
		if s.mcpServer != "" && mcpAgent(i) {
			tools += mcpTool(s.mcpServer)
		}
		if s.act {
			tools += actTools
		}
		if err := writeAgent(dir, agentName(i), tools); err != nil {
			return err
		}
		if compactAgent(i) {
			if err := withSmallHistory(filepath.Join(dir, agentName(i))); err != nil {
				return err
			}
		}
		if s.act {
			if err := writeHeartbeat(filepath.Join(dir, agentName(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

func agentName(i int) string { return fmt.Sprintf("agent-%03d", i) }

// workloadTools replaces the template's tools.
const workloadTools = `  tools:
    - type: builtin
      name: bash
    - type: wasm
      name: echo
`

// writeAgent makes an agent from the embedded template, with the tools of
// the workload: bash and the echo WASM tool in tools/echo/ (and, for some,
// the MCP server).
func writeAgent(agentsDir, name, tools string) error {
	dir, err := agents.WriteTemplate(agentsDir, name)
	if err != nil {
		return err
	}
	spec := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(spec, []byte(withTools(string(data), tools)), 0o644); err != nil {
		return err
	}
	tool := filepath.Join(dir, "tools", "echo")
	if err := os.MkdirAll(tool, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tool, "echo.wasm"), echoWasm, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tool, "tool.yaml"), echoManifest, 0o644); err != nil {
		return err
	}
	return writeAgnxParts(dir)
}

// agnxParts are what an Agnx agent folder carries besides agent.yaml, so
// that every agent build of the workload reads and assembles them as a
// user's would: a skill, a directive, a policy with deny and allow rules
// (checked on every tool call), and a tool folder found by discovery.
var agnxParts = map[string]string{
	"skills/notes/SKILL.md": "---\nname: notes\ndescription: Keep short notes in notes.md when the user asks to remember something.\n---\n\n# Notes\n\nAppend one line per note.\n",
	"directives/style.md":   "Answer in one short paragraph unless asked for more.\n",
	"policy.yaml":           "mode: dangerous\ndeny: [\"bash:rm -rf\", \"bash:sudo\"]\nallow: [\"bash:echo *\", \"wasm:echo\"]\n",
	"tools/hello/run":       "#!/bin/sh\necho hello \"$@\"\n",
	"tools/hello/README.md": "Says hello to its arguments.\n",
}

func writeAgnxParts(dir string) error {
	for name, text := range agnxParts {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// withTools drops the spec's "  tools:" block (the key and the lines
// indented under it) and appends tools in its place at the end of the
// file; spec keys are order-free.
func withTools(yaml, tools string) string {
	var out []string
	skipping := false
	for _, l := range strings.Split(strings.TrimRight(yaml, "\n"), "\n") {
		switch {
		case l == "  tools:":
			skipping = true
			continue
		case skipping && (strings.HasPrefix(l, "    ") || strings.TrimSpace(l) == ""):
			continue
		}
		skipping = false
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n" + tools
}
