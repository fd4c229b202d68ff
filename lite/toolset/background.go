package toolset

import (
	"log/slog"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Host is what background processes and workers report to, above the
// toolset (the App). Each method is called on the process's or the job's
// own goroutine, never the loop's.
type Host interface {
	// ProcessNotice tells the session that spawned a process what became
	// of it (it ended, it printed a watched pattern).
	ProcessNotice(agent, sessionID, text string)
	// ProcessEnded is told of every process's end (the schedules linked
	// to it are cancelled).
	ProcessEnded(handle string)
	// WorkerNotice tells the user of a worker job's outcome.
	WorkerNotice(n workers.Notice)
}

// NewBackground is the daemon's background process manager, over the
// loop's store. It runs nothing until an agent spawns a process; its
// notices and ends go to host.
func NewBackground(store bgproc.Store, log *slog.Logger, host Host) *bgproc.Manager {
	return bgproc.New(bgproc.Options{Store: store, Logger: log, OnExit: host.ProcessEnded, Notify: host.ProcessNotice})
}

// backgroundTool is the agent's background_process tool: its processes
// run in the agent's sandbox, with the network only as ref grants it.
// Without a daemon (agent validate) there is no manager, and no tool.
func (f *Factory) backgroundTool(a *agents.Agent, ref agents.ToolRef) runtime.Tool {
	if f.bg == nil {
		return nil
	}
	return f.bg.Tool(bgproc.Sandbox{Agent: a.Name, Workspace: a.Workspace, Start: f.sandboxes.ForBackground(a, ref.Network)})
}
