package lite

import (
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// registry gives the HTTP API its view of the agents: listings read the
// folders (and each agent.yaml, to show its model), Get loads one, and
// Reload re-reads them all now.
type registry struct{ c *agentCache }

var _ httpapi.Agents = registry{}

func (r registry) List() ([]httpapi.AgentInfo, error) {
	list, err := agents.List(r.c.cfg.AgentsDir)
	if err != nil {
		return nil, err
	}
	out := make([]httpapi.AgentInfo, 0, len(list))
	for _, e := range list {
		out = append(out, info(e.Name, e.Dir))
	}
	return out, nil
}

func info(name, dir string) httpapi.AgentInfo {
	a, err := agents.Load(dir)
	if err != nil {
		return httpapi.AgentInfo{Name: name, Err: err.Error()}
	}
	return httpapi.AgentInfo{Name: name, Description: a.Description, Version: a.Version,
		Provider: a.Model.Provider, Model: a.Model.Name}
}

func (r registry) Get(name string) (*agents.Agent, error) {
	return r.c.Spec(name)
}

// Reload re-reads every agent in the agents folder, as Agnx's
// reload-agents does: a loaded one is rebuilt now (an invalid edit keeps
// its last good version and is reported with its error); one not loaded
// yet is checked, and built on its first use as always.
func (r registry) Reload() []httpapi.AgentInfo {
	loaded := map[string]bool{}
	for _, n := range r.c.loadedNames() {
		loaded[n] = true
	}
	list, err := r.List()
	if err != nil {
		return []httpapi.AgentInfo{{Name: filepath.Base(r.c.cfg.AgentsDir), Err: err.Error()}}
	}
	for i, a := range list {
		if a.Err == "" && loaded[a.Name] {
			if err := r.c.reload(a.Name); err != nil {
				list[i].Err = err.Error()
			}
		}
	}
	if r.c.onReload != nil {
		r.c.onReload() // heartbeats gained or lost
	}
	return list
}
