package lite

import (
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// newWorkerRunner builds the Runner of a workers: entry: an ACP client,
// or Claude Code's headless CLI, in the sandbox sb runs tools in (bwrap,
// or none with sandbox: trust). A variable so that tests can put a worker
// of their own in its place.
var newWorkerRunner = func(sb *sandbox.Manager, cfg *config.Config, name string, e workers.Entry) (workers.Runner, error) {
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

// Runners builds the Runner of every configured worker, by name.
func Runners(sb *sandbox.Manager, cfg *config.Config) (map[string]workers.Runner, error) {
	if len(cfg.Workers) == 0 {
		return nil, nil
	}
	out := make(map[string]workers.Runner, len(cfg.Workers))
	for _, name := range slices.Sorted(maps.Keys(cfg.Workers)) {
		r, err := newWorkerRunner(sb, cfg, name, cfg.Workers[name])
		if err != nil {
			return nil, fmt.Errorf("worker %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
}

// newSupervisor is the worker tool's supervisor over the loop's kv, the
// data dir and the notification path; nil (logged) when no worker is
// configured or none can be built.
func newSupervisor(sb *sandbox.Manager, cfg *config.Config, loop *runtime.Loop, app func() *App, log *slog.Logger) *workers.Supervisor {
	runners, err := Runners(sb, cfg)
	if err != nil {
		log.Warn("workers unavailable; the worker tool is left out", "err", err)
		return nil
	}
	if len(runners) == 0 {
		return nil
	}
	return workers.New(workers.Options{Entries: cfg.Workers, Runners: runners, KV: loop, DataDir: cfg.DataDir, Logger: log,
		Notify: func(n workers.Notice) {
			app().notify.Notify(notify.Notification{Agent: n.Agent, SessionID: n.Session, Gateway: n.Gateway, ChatID: n.ChatID,
				Title: n.Title, Text: n.Text, Origin: "worker:" + n.Job})
		}})
}

// workerTool is the agent's worker tool; without workers (agent
// validate, none configured) it is left out with a warning.
func (f *toolFactory) workerTool(a *agents.Agent) runtime.Tool {
	if f.workers == nil {
		if !f.checkOnly {
			a.Warnings = append(a.Warnings, "spec.tools lists the worker tool but agnx.yaml configures no workers it can run: "+
				"add a workers: section (see the README), or remove the tool")
		}
		return nil
	}
	return f.workers.Tool(a.Workspace)
}
