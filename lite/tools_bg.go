package lite

import (
	"context"
	"log/slog"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// noticeTimeout bounds the posting of one process notice.
const noticeTimeout = 30 * time.Second

// newBackground is the daemon's background process manager, over the
// loop's store. It runs nothing until an agent spawns a process. A
// notice (a watched process ended or printed its pattern) is appended
// to the session that spawned it, which delivers it as it delivers
// answers (Loop.Notice); onExit is told of every end (nil: nobody).
func newBackground(loop *runtime.Loop, log *slog.Logger, app func() *App) *bgproc.Manager {
	return bgproc.New(bgproc.Options{Store: loop, Logger: log,
		OnExit: func(handle string) { app().processEnded(handle) },
		Notify: func(agent, sessionID, text string) { app().processNotice(agent, sessionID, text) }})
}

// processNotice tells the session that spawned a process what became of
// it (it ended, it printed a watched pattern): a notice in the session,
// which the model sees and its clients follow; a chat's gateway delivers
// it to the chat, exactly once; a session of no gateway (HTTP, CLI) also
// goes through the agent's notification settings (webhook, ntfy, log).
// On the process's own goroutine, never the loop's.
func (a *App) processNotice(agent, sessionID, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	if _, err := a.Loop.Notice(ctx, sessionID, runtime.Notice{Content: text, Origin: originProcess}); err != nil {
		a.log.Warn("cannot tell a session about its background process", "agent", agent, "session", sessionID, "err", err)
		return
	}
	info, err := a.Loop.Session(ctx, sessionID)
	if err != nil {
		return
	}
	if a.Config.Gateways.ServesChat(info.Gateway, info.ChatID) {
		if err := a.Follow(ctx, info.Gateway, sessionID, info.ChatID); err != nil {
			a.log.Warn("a process notice waits for its gateway", "agent", agent, "gateway", info.Gateway, "err", err)
		}
		return
	}
	a.notify.Notify(notify.Notification{Agent: agent, SessionID: sessionID, Gateway: info.Gateway, ChatID: info.ChatID,
		Title: agent + ": background process", Text: text, Origin: originProcess})
}

// originProcess is the Origin of a background process's notices.
const originProcess = "process"

// processEnded cancels the schedules linked to a process that ended
// (schedule's process_handle).
func (a *App) processEnded(handle string) {
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	if err := a.sched.svc.CancelProcess(ctx, handle); err != nil {
		a.log.Warn("cannot cancel the schedules of a finished process", "handle", handle, "err", err)
	}
}

// backgroundTool is the agent's background_process tool: its processes
// run in the agent's sandbox, with the network only as ref grants it.
// Without a daemon (agent validate) there is no manager, and no tool.
func (f *toolFactory) backgroundTool(a *agents.Agent, ref agents.ToolRef) runtime.Tool {
	if f.bg == nil {
		return nil
	}
	return f.bg.Tool(bgproc.Sandbox{Agent: a.Name, Workspace: a.Workspace, Start: f.sandboxes.ForBackground(a, ref.Network)})
}
