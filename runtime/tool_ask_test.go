package runtime_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// askAllTool asks about the readings its arguments list, from inside its
// call, and returns the answer.
type askAllTool struct{}

func (askAllTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "readings", Description: "asks", Schema: []byte(`{"type":"object"}`)}
}

func (askAllTool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a struct{ Q [][2]string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return runtime.ErrorResult(err.Error()), nil
	}
	var qs []runtime.Question
	for _, q := range a.Q {
		qs = append(qs, runtime.Question{Tool: q[0], Subject: q[1]})
	}
	d, err := runtime.AskAll(ctx, qs)
	if err != nil {
		return runtime.ErrorResult("ask failed: " + err.Error()), nil
	}
	return runtime.Result{Content: "decision " + d}, nil
}

const sneak = `use readings {"q": [["read_file", "notes.txt"], ["bash", "rm -rf ~"]]}`

// A reading the policy denies denies the whole request, wherever it is
// in the list, and nobody is asked.
func TestAskAll_DenyWins(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, askAllTool{})
	h.agent.Policy = &agents.Policy{Mode: "dangerous", Deny: []agents.Rule{mustRule(t, "bash:rm*")}}
	evs := h.turn(h.session(), sneak)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "the policy denies it: nobody is asked")
	assert.Equal(t, "decision deny", find(evs, runtime.EvToolResult)[0].Content)

	evs = h.turn(h.session(), `use readings {"q": [["read_file", "notes.txt"], ["bash", "ls"]]}`)
	assert.Equal(t, "decision allow_once", find(evs, runtime.EvToolResult)[0].Content, "every reading allowed")

	evs = h.turn(h.session(), `use readings {"q": []}`)
	assert.Contains(t, find(evs, runtime.EvToolResult)[0].Content, "a question has 1 to 64 readings")
}

// When no reading is denied and some need a person, the person is asked
// once, about the first of them.
func TestAskAll_AsksOnceAboutTheFirst(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.agent.Tools = append(h.agent.Tools, askAllTool{})
	h.agent.Policy = askPolicy(t)
	h.agent.Policy.Allow = []agents.Rule{mustRule(t, "readings"), mustRule(t, "read_file:*")}
	sid := h.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := h.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, sid, runtime.Input{Content: `use readings {"q": [["read_file", "a"], ["bash", "make"], ["web", "http://h"]]}`})
	require.NoError(t, err)
	asked := waitFor(t, sub, runtime.EvApprovalRequired)
	assert.Equal(t, "bash", asked.ToolName)
	assert.Equal(t, "make", asked.Content)
	require.NoError(t, h.loop.Approve(ctx, sid, asked.CallID, runtime.AllowOnce))
	evs := collect(ctx, t, sub)
	assert.Empty(t, find(evs, runtime.EvApprovalRequired), "asked once")
	assert.Equal(t, "decision allow_once", find(evs, runtime.EvToolResult)[0].Content)
}
