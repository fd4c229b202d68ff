package lite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/bgproc"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
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
	var skills []string
	for _, sk := range a.Skills {
		skills = append(skills, sk.Dir)
	}
	return f.bg.Tool(bgproc.Sandbox{Agent: a.Name, Workspace: a.Workspace,
		Start: f.sandboxes.startBackground(a.Workspace, ref.Network, skills)})
}

// startBackground starts a background process in an agent's sandbox, as
// bash runs a command there (the workspace handed to run_as, the skills
// read-only, the minimal environment, the limits) but with no deadline:
// the manager ends it. A full workspace or disk refuses the start; no
// disk watcher follows it (the file size cap set at its start is what
// bounds each file it writes).
func (s *sandboxes) startBackground(ws string, network bool, skills []string) bgproc.Start {
	return func(ctx context.Context, dir string, command []string) (*bwrap.Process, error) {
		r := s.runner(true)
		p := bwrap.Policy{Workspace: ws, Network: network, Chdir: dir, ReadOnly: skillMounts(skills)}
		// A subagent's process runs in the folder its call works in; its
		// log stays in the agent's own workspace, where the manager keeps it.
		p.Workspace, p.WorkspaceReadOnly = tools.WorkspaceFor(ctx, ws)
		if !r.Trust {
			st := s.probe()
			if !st.Usable {
				return nil, fmt.Errorf("the sandbox is unavailable, so no background process can start: %s", st.Problem)
			}
			if s.runAsErr != nil {
				return nil, s.runAsErr
			}
			p.RunAs = s.runAs
		}
		room, full, err := s.roomForCall(p)
		if err != nil {
			return nil, err
		}
		if full != "" {
			return nil, errors.New(full)
		}
		p.FileMB = min(room, bwrap.DefaultFileMB)
		p.TmpMB = s.cfg.TmpMB
		return r.Start(ctx, p, command)
	}
}
