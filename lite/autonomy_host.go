package lite

import (
	"context"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/autonomy"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
)

// TaskGateway is the Gateway of the sessions agents work on tasks in; the
// ChatID is "<board>/<id>".
const TaskGateway = autonomy.TaskGateway

// Schedules is the schedule service: list, show and cancel work without
// Serve; only Serve fires them.
func (a *App) Schedules() *sched.Service { return a.sched.Service() }

// Tasks is the task boards' store.
func (a *App) Tasks() *tasks.Store { return a.tasks.Store() }

// autonomyHost is the root's side of lite/autonomy: a chat's live session
// (autonomy.Chats) and the running gateways (autonomy.Gateways). It goes
// through the App: the hosts are made before the chats and the gateways,
// and call them only once the loop runs.
type autonomyHost struct{ a *App }

var (
	_ autonomy.Chats    = autonomyHost{}
	_ autonomy.Gateways = autonomyHost{}
)

func (h autonomyHost) Live(ctx context.Context, gateway, chatID string) (string, string, error) {
	return h.a.Chats().Live(ctx, gateway, chatID)
}

func (h autonomyHost) Running(name string) bool {
	_, ok := h.a.Gateway(name)
	return ok
}

func (h autonomyHost) Follow(ctx context.Context, gateway, sessionID, chatID string) error {
	return h.a.Follow(ctx, gateway, sessionID, chatID)
}

// hbAgents is the agent cache as the heartbeats read it (autonomy.Agents):
// the heartbeats are made before the cache, which they reach through the
// App once Open has set it.
type hbAgents struct{ a *App }

var _ autonomy.Agents = hbAgents{}

func (c hbAgents) Spec(name string) (*agents.Agent, error) { return c.a.Agents.Spec(name) }
func (c hbAgents) SpecAt(name, dir string) (*agents.Agent, error) {
	return c.a.Agents.SpecAt(name, dir)
}
