package lite

import (
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// registry gives the HTTP API its view of the agents: listings read the
// folders (and each agent.yaml, to show its model), Get reads one's spec,
// and Reload re-reads them all now. It stays in the root because a reload
// fans out beyond the cache: the heartbeats re-read which agents have one.
type registry struct{ a *App }

var _ httpapi.Agents = registry{}

func (r registry) List() ([]httpapi.AgentInfo, error) {
	list, err := agents.List(r.a.Config.AgentsDir)
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
	return r.a.Agents.Spec(name)
}

// Reload re-reads every agent in the agents folder, as Agnx's
// reload-agents does: a loaded one is rebuilt now (an invalid edit keeps
// its last good version and is reported with its error); one not loaded
// yet is checked, and built on its first use as always.
func (r registry) Reload() []httpapi.AgentInfo {
	loaded := map[string]bool{}
	for _, n := range r.a.Agents.LoadedNames() {
		loaded[n] = true
	}
	list, err := r.List()
	if err != nil {
		return []httpapi.AgentInfo{{Name: filepath.Base(r.a.Config.AgentsDir), Err: err.Error()}}
	}
	for i, a := range list {
		if a.Err == "" && loaded[a.Name] {
			if err := r.a.Agents.Reload(a.Name); err != nil {
				list[i].Err = err.Error()
			}
		}
	}
	r.a.hb.Reloaded() // heartbeats gained or lost
	return list
}
