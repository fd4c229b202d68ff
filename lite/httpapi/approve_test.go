package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// askPolicy makes the test agent ask before every tool call.
func (e *apiEnv) askPolicy() {
	e.t.Helper()
	require.NoError(e.t, os.WriteFile(filepath.Join(e.cfg.AgentsDir, "assistant", "policy.yaml"),
		[]byte("apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n"), 0o644))
}

type pendingJSON struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Command   string `json:"command"`
	ToolName  string `json:"tool_name"`
}

type completeJSON struct {
	Status    string `json:"status"`
	MessageID string `json:"message_id"`
	Content   string `json:"content"`
}

var msgIDRe = regexp.MustCompile(`^msg_[0-7][0-9A-HJKMNP-TV-Z]{25}$`)

// An agent whose policy asks: POST .../messages answers 202 at once, the
// session is paused, a lite stream shows approval_required and goes on
// once POST .../approve answers, which returns the end of the turn.
func TestApprove_OverHTTP(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.askPolicy()
	sid := e.session()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, scan := e.openStream(ctx, sid, "")

	var ask pendingJSON
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`, http.StatusAccepted, &ask)
	assert.Equal(t, sid, ask.SessionID)
	assert.NotEmpty(t, ask.CallID)
	assert.Equal(t, "list_dir", ask.ToolName)
	var info struct{ Status string }
	e.call("GET", "/api/v1/sessions/"+sid, "", http.StatusOK, &info)
	assert.Equal(t, "paused", info.Status)

	for {
		ev, ok := scan.next()
		require.True(t, ok, "stream ended before approval_required")
		if ev.Name == "approval_required" {
			assert.True(t, ev.HasID, "approval_required is durable")
			var got pendingJSON
			ev.decode(t, &got)
			assert.Equal(t, ask.CallID, got.CallID)
			break
		}
	}

	var done completeJSON
	e.call("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"allow_once"}`, http.StatusOK, &done)
	assert.Equal(t, "complete", done.Status)
	assert.Regexp(t, msgIDRe, done.MessageID)
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"deny"}`)
	p := requireProblem(t, resp, http.StatusNotFound, "not_found")
	assert.Contains(t, p.Detail, "no pending approval")

	var names []string
	var doneEv struct {
		MessageID string `json:"message_id"`
	}
	for {
		ev, ok := scan.next()
		require.True(t, ok)
		if ev.Name != "token" {
			names = append(names, ev.Name)
		}
		if ev.Name == "done" {
			ev.decode(t, &doneEv)
			break
		}
	}
	assert.Equal(t, []string{"approval_decision", "tool_result", "message", "done"}, names)
	assert.Equal(t, done.MessageID, doneEv.MessageID, "the stream and the reply name the same message")
}
