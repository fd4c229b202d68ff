package tasks

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func call(t *testing.T, tl runtime.Tool, agent, args string) runtime.Result {
	t.Helper()
	ctx := runtime.WithCall(context.Background(), runtime.CallInfo{Agent: agent, SessionID: "s-" + agent})
	res, err := tl.Run(ctx, []byte(args))
	require.NoError(t, err)
	return res
}

func TestTool_Actions(t *testing.T) {
	r := newRig(t)
	tl := NewTool(r.Store)
	require.True(t, json.Valid(tl.Spec().Schema))
	res := call(t, tl, "planner", `{"action":"add","title":"collect","priority":"high","agent":"researcher"}`)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Added T-1 on board default: todo, high priority, assigned to researcher.", res.Content)
	var task Task
	require.NoError(t, json.Unmarshal(res.Details, &task))
	assert.Equal(t, ByAgent("planner"), task.History[0].By)

	res = call(t, tl, "planner", `{"action":"add","title":"write","after":["T-1"]}`)
	require.False(t, res.IsError, res.Content)
	res = call(t, tl, "writer", `{"action":"move","id":"T-2","status":"in_progress"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "T-2 depends on T-1, which is todo")

	res = call(t, tl, "researcher", `{"action":"list","mine":true}`)
	assert.Equal(t, "T-1 [todo] collect — todo, high priority, assigned to researcher", res.Content)
	res = call(t, tl, "researcher", `{"action":"move","id":"T-1","status":"in_progress","comment":"on it"}`)
	require.False(t, res.IsError, res.Content)
	res = call(t, tl, "researcher", `{"action":"comment","id":"T-1","comment":"half way"}`)
	require.False(t, res.IsError, res.Content)
	res = call(t, tl, "researcher", `{"action":"update","id":"T-1","description":"more","version":1}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "changed since you read it")
	res = call(t, tl, "planner", `{"action":"assign","id":"T-2","agent":"writer"}`)
	require.False(t, res.IsError, res.Content)
	res = call(t, tl, "planner", `{"action":"show","id":"T-1"}`)
	assert.Contains(t, res.Content, "agent:researcher: todo → in_progress; note: on it")
	assert.Contains(t, res.Content, "agent:researcher: note: half way")

	for _, bad := range []string{`{"action":"fly"}`, `{"action":"move","id":"T-1","status":"later"}`, `{"action":"show"}`, `nope`,
		`{"action":"show","id":"T-99"}`, `{"action":"add","title":"x","start_at":"tomorrow"}`} {
		res = call(t, tl, "planner", bad)
		assert.True(t, res.IsError, bad)
	}
	res, err := tl.Run(context.Background(), []byte(`{"action":"list"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError, "outside a turn")
}

// Two agents claim the same task through the tool at once: one wins.
func TestTool_ConcurrentClaim(t *testing.T) {
	r := newRig(t)
	tl := NewTool(r.Store)
	call(t, tl, "planner", `{"action":"add","title":"contended"}`)
	var wg sync.WaitGroup
	results := make([]runtime.Result, 2)
	for i, agent := range []string{"a", "b"} {
		wg.Go(func() { results[i] = call(t, tl, agent, `{"action":"move","id":"T-1","status":"in_progress"}`) })
	}
	wg.Wait()
	assert.NotEqual(t, results[0].IsError, results[1].IsError, "%+v", results)
	task, err := r.Get(context.Background(), "", "T-1")
	require.NoError(t, err)
	assert.Len(t, task.History, 2)
	assert.Contains(t, []string{"agent:a", "agent:b"}, task.History[1].By)
}

func TestTool_Boards(t *testing.T) {
	r := newRig(t)
	tl := NewTool(r.Store)
	res := call(t, tl, "planner", `{"action":"add","board":"ops","title":"deploy"}`)
	require.False(t, res.IsError, res.Content)
	call(t, tl, "planner", `{"action":"add","title":"write"}`)
	res = call(t, tl, "planner", `{"action":"list"}`)
	assert.Contains(t, res.Content, "T-1 [todo] write")
	assert.Contains(t, res.Content, "ops/T-1 [todo] deploy")
	res = call(t, tl, "planner", `{"action":"list","board":"ops"}`)
	assert.Equal(t, "T-1 [todo] deploy — todo, medium priority", res.Content)
	res = call(t, tl, "planner", `{"action":"move","id":"ops/T-1","status":"in_progress"}`)
	require.False(t, res.IsError, res.Content)
	got, err := r.Get(context.Background(), "ops", "T-1")
	require.NoError(t, err)
	assert.Equal(t, InProgress, got.Status)
}
