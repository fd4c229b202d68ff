package agentcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Reading an agent's spec: its own files (ReadSpec), or as a build uses
// them (prepared: with the data dir's shared directives and skills), and
// the files whose changes make the cache rebuild it.

// ErrAgentNotFound matches (errors.Is) the error for an agent with no
// folder.
var ErrAgentNotFound = runtime.ErrAgentNotFound

// AgentNotFoundError says which agent is missing and how to make it.
type AgentNotFoundError struct{ Name, Dir string }

func (e *AgentNotFoundError) Error() string {
	if !agents.ValidName(e.Name) {
		return fmt.Sprintf("%q is not a valid agent name: use letters, digits and hyphens", e.Name)
	}
	return fmt.Sprintf("no agent %q in %s: create it with \"agnx-lite agent create %s\" or list them with \"agnx-lite agent list\"",
		e.Name, e.Dir, e.Name)
}

// Is makes errors.Is(err, ErrAgentNotFound) hold.
func (e *AgentNotFoundError) Is(target error) bool { return target == ErrAgentNotFound }

// ReadSpec reads the agent's own files alone, as its folder has them now:
// no shared directives or skills, no tools built, nothing started, and
// no look at the cache. Retention and memory search need no more.
func (c *Cache) ReadSpec(name string) (*agents.Agent, error) {
	return c.SpecAt(name, filepath.Join(c.cfg.AgentsDir, name))
}

// SpecAt is ReadSpec of the agent in dir (the heartbeats' walk of the
// agents directory).
func (c *Cache) SpecAt(name, dir string) (*agents.Agent, error) {
	if !agents.ValidName(name) {
		return nil, &AgentNotFoundError{Name: name, Dir: c.cfg.AgentsDir}
	}
	if _, err := os.Stat(filepath.Join(dir, agents.FileName)); errors.Is(err, fs.ErrNotExist) {
		return nil, &AgentNotFoundError{Name: name, Dir: c.cfg.AgentsDir}
	}
	spec, err := agents.Load(dir)
	if err != nil {
		return nil, err
	}
	if spec.Name != name {
		return nil, &agents.Error{File: filepath.Join(dir, agents.FileName), Line: 0,
			Msg: fmt.Sprintf("metadata.name %q does not match the folder name %q: rename one so they agree", spec.Name, name)}
	}
	return spec, nil
}

// prepared reads the agent's spec as a build uses it: its own files, the
// data dir's shared directives and skills, and its workspace's path.
func (c *Cache) prepared(name, dir string) (*agents.Agent, error) {
	spec, err := c.SpecAt(name, dir)
	if err != nil {
		return nil, err
	}
	c.addSharedDirectives(spec)
	spec.AddSharedSkills(filepath.Join(c.cfg.DataDir, agents.SkillsFolder))
	spec.Workspace = c.cfg.WorkspaceDir(spec.Name)
	return spec, nil
}

// addSharedDirectives gives the agent the data dir's directives (shared by
// every agent, as Agnx's {workspace}/directives) and their warnings; the
// folder and its files join the agent's Files so that an edit reloads it.
func (c *Cache) addSharedDirectives(spec *agents.Agent) {
	dir := filepath.Join(c.cfg.DataDir, agents.DirectivesDir)
	ds, warnings := agents.LoadDirectives(dir)
	spec.SharedDirectives = ds
	spec.Warnings = append(spec.Warnings, warnings...)
	files := []string{dir}
	for _, d := range ds {
		files = append(files, filepath.Join(dir, d.Name+".md"))
	}
	spec.Files = append(spec.Files, files...)
	if mod := newestMod(files); mod.After(spec.ModTime) {
		spec.ModTime = mod
	}
}

// policyError is an agent's policy that does not load: it refuses the
// agent, even one built before (AGNX-COMPAT §14.3).
type policyError struct{ err error }

func (e *policyError) Error() string { return e.err.Error() }

func (e *policyError) Unwrap() error { return e.err }

// policyFiles are the tiers of an agent's policy: the data dir's, the
// agent's, the agent's local one.
func (c *Cache) policyFiles(dir string) []string {
	return []string{filepath.Join(c.cfg.DataDir, agents.PolicyFile), filepath.Join(dir, agents.PolicyFile),
		filepath.Join(dir, agents.PolicyLocalFile)}
}

// newestMod is the newest modification time of files (missing ones are
// skipped: a tier created later changes its folder's time).
func newestMod(files []string) time.Time {
	var newest time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	return newest
}
