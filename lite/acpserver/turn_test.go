package acpserver

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// approvals records the decisions the server gives; the turn's events
// come from the test, for the ones the runtime does not emit yet
// (tool_progress, runtime.Ask's questions).
type approvals struct {
	Backend
	got chan string
}

func (a *approvals) Approve(_ context.Context, sid, callID, decision string) error {
	a.got <- sid + " " + callID + " " + decision
	return nil
}

// seen is a client that keeps the updates as JSON and answers
// permission requests with allow_always.
type seen struct {
	acp.Client
	mu      sync.Mutex
	updates []acp.SessionUpdate
	asked   []acp.RequestPermissionRequest
	changed chan struct{}
}

func (c *seen) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

// wait waits until the client has n updates.
func (c *seen) wait(t *testing.T, n int) []acp.SessionUpdate {
	deadline := time.After(time.Minute)
	for {
		c.mu.Lock()
		u := c.updates
		c.mu.Unlock()
		if len(u) >= n {
			return u
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("%d updates, want %d", len(u), n)
		}
	}
}

func (c *seen) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	c.mu.Unlock()
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(runtime.AllowAlways)}, nil
}

func TestTurn_ProgressAskAndEnds(t *testing.T) {
	aR, aW := io.Pipe()
	cR, cW := io.Pipe()
	defer aW.Close()
	defer cW.Close()
	b := &approvals{got: make(chan string, 4)}
	s := &server{b: b, log: slog.New(slog.DiscardHandler)}
	s.conn = acp.NewAgentSideConnection(s, cW, aR)
	client := &seen{changed: make(chan struct{}, 1)}
	cc := acp.NewClientSideConnection(client, aW, cR)
	cc.SetLogger(s.log)
	s.conn.SetLogger(s.log)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr := &turn{s: s, sid: "session_1", ctx: ctx}

	for _, e := range []runtime.Event{
		{Type: runtime.EvToken, Content: "Let me "},
		{Type: runtime.EvAssistant, Content: "Let me look."}, // a token was lost: the rest is sent
		{Type: runtime.EvToolCall, CallID: "c1", ToolName: "worker", Arguments: `{"action":"run"}`},
		{Type: runtime.EvToolProgress, CallID: "c1", ToolName: "worker", Content: "editing main.go"},
		{Type: runtime.EvApprovalRequired, CallID: "c1.1", ToolName: "bash", Content: "go test ./..."},
	} {
		require.NoError(t, tr.event(e))
	}
	select {
	case got := <-b.got:
		assert.Equal(t, "session_1 c1.1 allow_always", got)
	case <-time.After(time.Minute):
		t.Fatal("the permission's answer was not given")
	}
	for _, e := range []runtime.Event{
		{Type: runtime.EvApprovalDecision, CallID: "c1.1", Decision: runtime.AllowAlways, Reason: "user"},
		{Type: runtime.EvToolResult, CallID: "c1", ToolName: "worker", Success: true, Content: "done"},
		{Type: runtime.EvError, Code: runtime.CodeToolLimit, Content: "the agent used its 8 tool rounds: raise max_tool_iterations to allow more"},
		{Type: runtime.EvTurnEnd, Reason: runtime.TurnCompleted},
	} {
		require.NoError(t, tr.event(e))
	}
	resp, err := tr.response(false)
	require.NoError(t, err)
	tr.close()
	assert.Equal(t, acp.StopReasonMaxTurnRequests, resp.StopReason)
	assert.Empty(t, b.got, "one decision only")

	// The SDK hands notifications over in order; wait for the last.
	u := client.wait(t, 8)
	require.Len(t, u, 8)
	assert.Equal(t, "Let me ", u[0].AgentMessageChunk.Content.Text.Text)
	assert.Equal(t, "look.", u[1].AgentMessageChunk.Content.Text.Text)
	assert.Equal(t, "worker run", u[2].ToolCall.Title)
	assert.Equal(t, acp.ToolCallStatusInProgress, *u[3].ToolCallUpdate.Status)
	assert.Equal(t, "editing main.go", u[3].ToolCallUpdate.Content[0].Content.Content.Text.Text, "progress shows as the call's content")
	assert.Equal(t, acp.ToolCallId("c1.1"), u[4].ToolCall.ToolCallId, "a question from inside a call is a call of its own")
	assert.Equal(t, acp.ToolKindExecute, u[4].ToolCall.Kind)
	assert.Equal(t, acp.ToolCallStatusPending, u[4].ToolCall.Status)
	assert.Equal(t, "bash go test ./...", u[4].ToolCall.Title)
	assert.Equal(t, acp.ToolCallStatusCompleted, *u[5].ToolCallUpdate.Status)
	assert.Equal(t, acp.ToolCallStatusCompleted, *u[6].ToolCallUpdate.Status)
	assert.Equal(t, "done", u[6].ToolCallUpdate.Content[0].Content.Content.Text.Text)
	assert.Contains(t, u[7].AgentMessageChunk.Content.Text.Text, "max_tool_iterations", "the turn's note ends the answer")
	require.Len(t, client.asked, 1)
	assert.Equal(t, acp.ToolCallId("c1.1"), client.asked[0].ToolCall.ToolCallId)
}

// A failed turn answers a JSON-RPC error with its error's sentence; an
// interrupted one says it goes on later.
func TestTurn_Response(t *testing.T) {
	for _, tc := range []struct {
		end       string
		errs      []runtime.Event
		cancelled bool
		stop      acp.StopReason
		msg       string
	}{
		{end: runtime.TurnCancelled, stop: acp.StopReasonCancelled},
		{end: runtime.TurnPaused, stop: acp.StopReasonCancelled},
		{end: runtime.TurnFailed, cancelled: true, stop: acp.StopReasonCancelled},
		{end: runtime.TurnFailed, errs: []runtime.Event{{Code: "model_not_found", Content: "run ollama pull x"}}, msg: "run ollama pull x"},
		{end: runtime.TurnFailed, msg: "the turn failed: see the log of agnx-lite for why"},
		{end: runtime.TurnInterrupted, msg: "agnx-lite stopped during the turn; it goes on when agnx-lite is back: load the session to see the answer"},
	} {
		tr := &turn{end: tc.end, errs: tc.errs}
		resp, err := tr.response(tc.cancelled)
		if tc.msg != "" {
			var re *acp.RequestError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tc.msg, re.Message)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.stop, resp.StopReason)
	}
}
