package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// diskLoader builds the harness's agent with the policy its folder has
// now, as lite's agent cache does after an edit.
type diskLoader struct {
	base *runtime.LoadedAgent
	dir  string
}

func (d diskLoader) LoadAgent(string) (*runtime.LoadedAgent, error) {
	p, err := agents.LoadAgentPolicy("", d.dir)
	if err != nil {
		return nil, err
	}
	a := *d.base
	a.Policy = p
	return &a, nil
}

// folderHarness is a harness whose agent has a folder with policy.
func folderHarness(t *testing.T, policy string) (*harness, string, chan runtime.Notification) {
	h := newHarness(t, llmtest.Echo())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.PolicyFile), []byte(policy), 0o600))
	h.agent.Spec.Dir = dir
	notes := make(chan runtime.Notification, 16)
	h.opts.Agents = diskLoader{h.agent, dir}
	h.opts.Notify = func(n runtime.Notification) { notes <- n }
	h.restart()
	return h, dir, notes
}

func TestPolicy_DeniedResult(t *testing.T) {
	h, _, notes := folderHarness(t, "deny: [builtin:read_file]\nnotify: {enabled: true}\n")
	evs := h.turn(h.session(), `use read_file {"path":"notes.txt"}`)
	res := find(evs, runtime.EvToolResult)[0]
	assert.False(t, res.Success)
	assert.Equal(t, "Command 'read_file' was denied by policy. This command is not allowed. (rule builtin:read_file)", res.Content)
	assert.Empty(t, notes, "a call that did not run is not notified")
}

// allow_always holds for every session of the agent at once, is saved
// in the agent's policy.local.yaml, and is read from there after a
// restart; executed calls are notified.
func TestPolicy_AllowAlwaysSavedAcrossRestart(t *testing.T) {
	h, dir, notes := folderHarness(t, "# mine\nmode: ask\nnotify: {enabled: true}\n")
	sid, sub, ask := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	require.NoError(t, h.loop.Approve(context.Background(), sid, ask.CallID, runtime.AllowAlways))
	collect(context.Background(), t, sub)
	sub.Close()
	n := <-notes
	assert.Equal(t, []any{sid, "assistant", "read_file", "builtin", "read_file", true},
		[]any{n.Session, n.Agent, n.Tool, n.Type, n.Command, n.Success})

	evs := h.turn(h.session(), `use read_file {"path":"notes.txt"}`)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "another session of the agent is not asked")
	assert.Equal(t, "buy milk", find(evs, runtime.EvToolResult)[0].Content)

	h.restart() // the writer is done once the loop has stopped
	data, err := os.ReadFile(filepath.Join(dir, agents.PolicyLocalFile))
	require.NoError(t, err)
	assert.Equal(t, "allow:\n  - \"read_file:notes.txt\"\n", string(data))
	policy, err := os.ReadFile(filepath.Join(dir, agents.PolicyFile))
	require.NoError(t, err)
	assert.Equal(t, "# mine\nmode: ask\nnotify: {enabled: true}\n", string(policy), "the agent's own tier is not touched")

	evs = h.turn(h.session(), `use read_file {"path":"notes.txt"}`)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "after a restart, from the file")
	p, err := agents.LoadAgentPolicy("", dir)
	require.NoError(t, err)
	d, _ := p.Decide("read_file", "other.txt")
	assert.Equal(t, agents.Ask, d, "the rule is the approved call alone")
}

// Two allow_always answers at once are both saved.
func TestPolicy_AllowAlwaysConcurrent(t *testing.T) {
	h, dir, _ := folderHarness(t, "mode: ask\n")
	sidA, subA, askA := startAsking(t, h, `use read_file {"path":"notes.txt"}`)
	sidB, subB, askB := startAsking(t, h, `use list_dir {}`)
	var wg sync.WaitGroup
	for _, a := range [][2]string{{sidA, askA.CallID}, {sidB, askB.CallID}} {
		wg.Go(func() { assert.NoError(t, h.loop.Approve(context.Background(), a[0], a[1], runtime.AllowAlways)) })
	}
	wg.Wait()
	collect(context.Background(), t, subA)
	collect(context.Background(), t, subB)
	h.restart()
	p, err := agents.LoadAgentPolicy("", dir)
	require.NoError(t, err)
	var rules []string
	for _, r := range p.Allow {
		rules = append(rules, r.Raw)
	}
	assert.ElementsMatch(t, []string{"read_file:notes.txt", "list_dir:."}, rules)
}
