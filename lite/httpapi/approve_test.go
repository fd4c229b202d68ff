package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// An agent whose policy asks: the stream shows approval_required, POST
// approve answers it, and the same stream goes on to the tool's result.
func TestApprove_OverHTTP(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	require.NoError(t, os.WriteFile(filepath.Join(e.cfg.AgentsDir, "assistant", "policy.yaml"),
		[]byte("apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n"), 0o644))
	sid := e.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, scan := e.openStream(ctx, sid, "")
	answered := make(chan int, 1)
	go func() { // the synchronous POST returns when the turn ends
		resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`)
		resp.Body.Close()
		answered <- resp.StatusCode
	}()

	var ask struct {
		CallID   string `json:"call_id"`
		Command  string `json:"command"`
		ToolName string `json:"tool_name"`
	}
	for {
		ev, ok := scan.next()
		require.True(t, ok, "stream ended before approval_required")
		if ev.Name == "approval_required" {
			assert.True(t, ev.HasID, "approval_required is durable")
			ev.decode(t, &ask)
			break
		}
	}
	assert.Equal(t, "list_dir", ask.ToolName)

	e.call("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"allow_once"}`, http.StatusOK, nil)
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"deny"}`)
	requireProblem(t, resp, http.StatusNotFound, "not_found")

	var names []string
	for {
		ev, ok := scan.next()
		require.True(t, ok)
		if ev.Name != "token" {
			names = append(names, ev.Name)
		}
		if ev.Name == "done" {
			break
		}
	}
	assert.Equal(t, []string{"approval_decision", "tool_result", "message", "done"}, names)
	assert.Equal(t, http.StatusOK, <-answered)
}
