package toolset

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/wasmtools"
)

// Factory turns an agent's spec.tools into tools: the one place that
// knows the concrete tool types. It is safe for concurrent use: the agent
// cache builds several agents at once.
type Factory struct {
	sandboxes *sandbox.Manager
	log       *slog.Logger
	wasm      *wasmEngine
	search    *tools.WebSearch // the web tool's search backend
	// env is sandbox.env: what a cli tool's env: names pick from.
	env map[string]config.Secret
	// sessions is what the session tool reads; nil outside a daemon.
	sessions tools.SessionStore
	// shared is the folder whose tools/ every agent gets (Agnx's
	// {workspace}/tools: the data dir's); "" for none.
	shared string
	// world is the world memory folder every agent's memory tool shares;
	// "" for none. worldLimits bound what it may hold.
	world       string
	worldLimits memory.WorldLimits
	// memIndex gives the search behind an agent's recall with a query;
	// nil (or a nil result): recall with a query gives the plain recall.
	memIndex func(a *agents.Agent) memory.Searcher
	// banks are the memory banks by agent folder, so that the versions of
	// an agent a reload leaves running share one bank and its lock.
	banksMu sync.Mutex
	banks   map[string]*memory.Bank
	// mcp builds the tools of MCP servers; with checkOnly, the entries are
	// checked but no server is started or listed (agent validate).
	mcp       *MCP
	checkOnly bool
	// sched is the schedule service the schedule tool uses; nil outside
	// an App (agent validate): the tool is then left out.
	sched *sched.Service
	// tasks is the task boards the tasks tool uses; nil outside an App.
	tasks *tasks.Store
	// bg runs the background_process tool's processes; nil outside a
	// daemon.
	bg *bgproc.Manager
	// workers runs the worker tool's jobs; nil outside a daemon or
	// without workers (workers.go).
	workers *workers.Supervisor
}

// Options are everything a Factory uses, given once to New. Outside a
// daemon (agent validate, tool run) only Config, Logger, Sandboxes and
// Progress are set: the tools that need a daemon are then left out.
type Options struct {
	Config *config.Config
	Logger *slog.Logger // nil: discard
	// Sandboxes run the agents' tools; the Factory closes them with
	// itself.
	Sandboxes *sandbox.Manager
	// Progress, when set, shows the first compile of a WASM tool.
	Progress *Progress
	// CheckOnly checks MCP entries without starting a server (agent
	// validate) and says nothing of a worker tool without workers.
	CheckOnly bool

	// What a daemon gives; nil outside one.
	Sessions tools.SessionStore // the session tool's view of the sessions
	// MemIndex gives the search behind an agent's recall with a query.
	MemIndex func(a *agents.Agent) memory.Searcher
	// MCPCache keeps the MCP servers' tool lists (the loop's KV).
	MCPCache mcp.Cache
	// Agents is told when an MCP server changed an agent's tool list.
	Agents  AgentCache
	Sched   *sched.Service      // the schedule tool's service
	Tasks   *tasks.Store        // the tasks tool's boards
	Bg      *bgproc.Manager     // the background_process tool's manager (NewBackground)
	Workers *workers.Supervisor // the worker tool's supervisor (NewSupervisor)

	// Measure measures what a module's first load holds (nil: the
	// process's own figures, heldNow); SlowCompile is how long a load
	// takes before Progress shows it (0: wasmSlow). Tests set both.
	Measure     func() Held
	SlowCompile time.Duration
}

// AgentCache is the agent cache above the toolset, as the MCP glue sees
// it: an agent whose server changed its tool list is rebuilt on its next
// use. MarkStale must be safe from any goroutine and must not block.
type AgentCache interface {
	MarkStale(agent string)
}

// New makes the factory of o. It starts nothing: the WASM engine and the
// MCP manager are made by the first agent that needs them.
func New(o Options) *Factory {
	cfg, log := o.Config, o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wasm := &wasmEngine{cacheDir: filepath.Join(cfg.DataDir, "wasm-cache"), mode: cfg.Wasm.Mode, env: cfg.Sandbox.Env, log: log,
		progress: o.Progress, slow: o.SlowCompile, measure: o.Measure}
	return &Factory{sandboxes: o.Sandboxes, env: cfg.Sandbox.Env, log: log, wasm: wasm, search: webSearch(cfg), shared: cfg.DataDir,
		world: cfg.WorldMemoryDir(), worldLimits: cfg.WorldMemory.Limits(),
		mcp:       NewMCP(MCPOptions{Config: cfg, Logger: log, Sandboxes: o.Sandboxes, Cache: o.MCPCache, Agents: o.Agents}),
		checkOnly: o.CheckOnly, sessions: o.Sessions, memIndex: o.MemIndex, sched: o.Sched, tasks: o.Tasks, bg: o.Bg,
		workers: o.Workers}
}

// MCP is the factory's MCP glue: its servers' stats, and forgetting an
// evicted agent's servers.
func (f *Factory) MCP() *MCP { return f.mcp }

// Close stops the MCP servers, the WASM engine and the sandboxes. The
// tools built must be closed first (CloseTools).
func (f *Factory) Close() {
	f.mcp.Close()
	f.wasm.close()
	f.sandboxes.Close()
}

// builtins are the built-in tools by name: Agnx's (bash, web, session, schedule,
// reload_tools, memory) and lite's own file tools and skill tool (which
// an agent with skills gets without listing it).
var builtins = []string{"bash", "web", "session", "reload_tools", "memory", "read_file", "write_file", "edit_file", "list_dir",
	"glob", "grep", "skill", "schedule", "background_process", "agent", "worker", "tasks"}

// Build returns the agent's tools, adding to its Warnings and Files (the
// tool folders watched for changes). On error, the tools built so far are
// closed.
func (f *Factory) Build(a *agents.Agent) (out []runtime.Tool, err error) {
	defer func() {
		if err != nil {
			CloseTools(out)
			out = nil
		}
	}()
	manifests := map[string]bool{}
	for i, ref := range a.Tools {
		switch ref.Type {
		case "wasm":
			t, err := f.wasm.load(a, wasmManifest(a, ref), ref.Name)
			if err != nil {
				return out, entryError(a, i, err)
			}
			manifests[t.Manifest().File] = true
			out = append(out, t)
		case "builtin":
			if agents.IsMemoryTool(ref.Name) {
				continue // memoryTool adds it, once
			}
			t, err := f.builtin(a, ref)
			if err != nil {
				return out, entryError(a, i, err)
			}
			if t != nil {
				out = append(out, t)
			}
		case "cli":
			t, err := f.cli(a, ref)
			if err != nil {
				return out, entryError(a, i, err)
			}
			if t != nil {
				out = append(out, t)
			}
		case "mcp":
			// with agnx.yaml's servers, below
		default:
			return out, entryError(a, i, fmt.Errorf("tools of type %q are not supported by this build yet: remove %q from spec.tools", ref.Type, ref.Name))
		}
	}
	if t := f.memoryTool(a, out); t != nil {
		out = append(out, t)
	}
	found, err := f.wasm.discover(a, manifests)
	if out = append(out, found...); err != nil {
		return out, err
	}
	out = f.withSkillTool(a, out)
	if f.checkOnly {
		_, err = f.mcp.Servers(a)
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

func (f *Factory) builtin(a *agents.Agent, ref agents.ToolRef) (runtime.Tool, error) {
	ws := a.Workspace
	switch strings.ToLower(ref.Name) {
	case "bash":
		return &tools.Bash{Sandbox: f.sandboxes.ForAgent(a, ref.Network), MaxTimeout: config.Seconds(ref.TimeoutSeconds, 0)}, nil
	case "read_file":
		return &tools.ReadFile{Workspace: ws}, nil
	case "write_file":
		return f.sandboxes.Capped(ws, &tools.WriteFile{Workspace: ws}), nil
	case "edit_file":
		return f.sandboxes.Capped(ws, &tools.EditFile{Workspace: ws}), nil
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
	case "skill":
		return f.skillTool(a), nil
	case "schedule":
		if f.sched == nil {
			return nil, nil // agent validate, tool run: no schedules there
		}
		return sched.NewTool(f.sched), nil
	case "background_process":
		return f.backgroundTool(a, ref), nil
	case "agent":
		return runtime.AgentTool{}, nil
	case "worker":
		return f.workerTool(a), nil
	case "tasks":
		if f.tasks == nil {
			return nil, nil // agent validate, tool run: no boards there
		}
		return tasks.NewTool(f.tasks), nil
	}
	return nil, fmt.Errorf("there is no built-in tool %q (available: %s): fix its name in spec.tools",
		ref.Name, strings.Join(builtins, ", "))
}

// entryError locates the error of the agent's spec.tools[i] at the line
// of agent.yaml naming it, as an *agents.Error: the entry is what the user
// must fix, and the API answers 422 agent_invalid with file:line, not 500.
// An error that already names its own file (a tool.yaml) and the engine's
// closing pass through.
func entryError(a *agents.Agent, i int, err error) error {
	var located *agents.Error
	if errors.As(err, &located) || errors.Is(err, wasmtools.ErrClosed) {
		return err
	}
	return &agents.Error{File: filepath.Join(a.Dir, agents.FileName), Line: a.ToolLine(i), Msg: err.Error()}
}

// memoryTool is the agent's memory tool, or nil when it has none: an
// agent gets it with spec.memory (backend filesystem) or by listing the
// built-in memory tool; another backend is a warning, and so is a tool
// of its own named memory among declared, which keeps the name.
func (f *Factory) memoryTool(a *agents.Agent, declared []runtime.Tool) runtime.Tool {
	if !a.HasMemory() {
		if a.Memory.Backend != "" {
			a.Warnings = append(a.Warnings, fmt.Sprintf("spec.memory.backend %q is not one agnx-lite has (only filesystem): "+
				"the agent runs without the memory tool", a.Memory.Backend))
		}
		return nil
	}
	for _, t := range declared {
		if strings.EqualFold(t.Spec().Name, memory.ToolName) {
			a.Warnings = append(a.Warnings, "spec.tools declares its own tool named memory, which takes the place of the built-in "+
				"memory tool: rename it to get both")
			return nil
		}
	}
	t := &memory.Tool{Bank: f.bank(a)}
	if f.memIndex != nil {
		t.Search = f.memIndex(a)
	}
	return t
}

// bank returns the memory bank of the agent's folder, the same one for
// every build of the agent.
func (f *Factory) bank(a *agents.Agent) *memory.Bank {
	f.banksMu.Lock()
	defer f.banksMu.Unlock()
	if b := f.banks[a.Dir]; b != nil && b.WorldDir() == f.world {
		return b
	}
	if f.banks == nil {
		f.banks = make(map[string]*memory.Bank)
	}
	b := memory.NewBank(memory.BankOptions{AgentDir: a.Dir, WorldDir: f.world, World: f.worldLimits})
	f.banks[a.Dir] = b
	return b
}
