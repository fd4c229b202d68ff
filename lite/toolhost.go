package lite

import (
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/notify"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// The root's side of lite/toolset: what the tools report to (toolHost)
// and the loop's view of the agent cache (appAgents). Both hold the App,
// whose fields Open fills in before anything can call them.

// noticeTimeout bounds the posting of one process notice.
const noticeTimeout = 30 * time.Second

// originProcess is the Origin of a background process's notices.
const originProcess = "process"

// toolHost is where background processes and workers report
// (toolset.Host).
type toolHost struct{ a *App }

var _ toolset.Host = toolHost{}

func (h toolHost) ProcessNotice(agent, sessionID, text string) {
	h.a.processNotice(agent, sessionID, text)
}
func (h toolHost) ProcessEnded(handle string) { h.a.processEnded(handle) }

// WorkerNotice tells the user of a worker job's outcome through the
// agent's notification path.
func (h toolHost) WorkerNotice(n workers.Notice) {
	h.a.notify.Notify(notify.Notification{Agent: n.Agent, SessionID: n.Session, Gateway: n.Gateway, ChatID: n.ChatID,
		Title: n.Title, Text: n.Text, Origin: "worker:" + n.Job})
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

// processEnded cancels the schedules linked to a process that ended
// (schedule's process_handle).
func (a *App) processEnded(handle string) {
	ctx, cancel := context.WithTimeout(context.Background(), noticeTimeout)
	defer cancel()
	if err := a.Schedules().CancelProcess(ctx, handle); err != nil {
		a.log.Warn("cannot cancel the schedules of a finished process", "handle", handle, "err", err)
	}
}

// appAgents is the App's agent cache as the loop and the MCP glue see it:
// the loop is built before the cache (the cache's tools need the loop),
// so it is handed this, which forwards to a.Agents, set by Open before
// the loop runs.
type appAgents struct{ a *App }

var (
	_ runtime.AgentCache  = appAgents{}
	_ runtime.AgentPinner = appAgents{}
	_ toolset.AgentCache  = appAgents{}
	_ notify.Agents       = appAgents{}
)

func (c appAgents) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	return c.a.Agents.LoadAgent(name)
}
func (c appAgents) Spec(name string) (*agents.Agent, error) { return c.a.Agents.Spec(name) }
func (c appAgents) CachedAgent(name string) (*runtime.LoadedAgent, bool) {
	return c.a.Agents.CachedAgent(name)
}
func (c appAgents) Pin(name string)       { c.a.Agents.Pin(name) }
func (c appAgents) Unpin(name string)     { c.a.Agents.Unpin(name) }
func (c appAgents) MarkStale(name string) { c.a.Agents.MarkStale(name) }
