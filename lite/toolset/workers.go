package toolset

import (
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// NewRunner builds the Runner of a workers: entry: an ACP client, or
// Claude Code's headless CLI, in the sandbox sb runs tools in (bwrap, or
// none with sandbox: trust).
func NewRunner(sb *sandbox.Manager, cfg *config.Config, name string, e workers.Entry) (workers.Runner, error) {
	rc := workers.RunnerConfig{Name: name, Argv: e.ACP, Binary: e.Claude, Args: e.Args, Network: e.Network, Env: e.Env,
		Timeout: e.RunTimeout, Sandbox: sb.ForWorkers(e.Sandbox == "trust"),
		// Its home, kept across runs so that a session can be resumed:
		// the only folder of the data dir the worker sees.
		Home: filepath.Join(cfg.DataDir, "workers", "home", name)}
	if e.Claude != "" {
		return workers.NewClaudeRunner(rc), nil
	}
	return workers.NewACPRunner(rc), nil
}

// SupervisorOptions are what the worker tool's supervisor is made of.
type SupervisorOptions struct {
	Sandboxes *sandbox.Manager
	Config    *config.Config
	KV        workers.KV // the loop's kv: the job records
	Host      Host       // told of each job's outcome
	Logger    *slog.Logger
	// NewRunner builds each worker's Runner; nil: NewRunner. Tests put a
	// worker of their own in its place.
	NewRunner func(sb *sandbox.Manager, cfg *config.Config, name string, e workers.Entry) (workers.Runner, error)
}

// runners builds the Runner of every configured worker, by name.
func runners(o SupervisorOptions) (map[string]workers.Runner, error) {
	cfg := o.Config
	if len(cfg.Workers) == 0 {
		return nil, nil
	}
	mk := o.NewRunner
	if mk == nil {
		mk = NewRunner
	}
	out := make(map[string]workers.Runner, len(cfg.Workers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Workers)) {
		r, err := mk(o.Sandboxes, cfg, name, cfg.Workers[name])
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
}

// NewSupervisor is the worker tool's supervisor over the loop's kv, the
// data dir and the notification path; nil (logged) when no worker is
// configured or none can be built.
func NewSupervisor(o SupervisorOptions) *workers.Supervisor {
	rs, err := runners(o)
	if err != nil {
		o.Logger.Warn("workers unavailable; the worker tool is left out", "err", err)
		return nil
	}
	if len(rs) == 0 {
		return nil
	}
	return workers.New(workers.Options{Entries: o.Config.Workers, Runners: rs, KV: o.KV, DataDir: o.Config.DataDir,
		Logger: o.Logger, Notify: o.Host.WorkerNotice})
}

// workerTool is the agent's worker tool; without workers (agent
// validate, none configured) it is left out with a warning.
func (f *Factory) workerTool(a *agents.Agent) runtime.Tool {
	if f.workers == nil {
		if !f.checkOnly {
			a.Warnings = append(a.Warnings, "spec.tools lists the worker tool but agnx.yaml configures no workers it can run: "+
				"add a workers: section (see the README), or remove the tool")
		}
		return nil
	}
	return f.workers.Tool(a.Workspace)
}
