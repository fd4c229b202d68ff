package acpserver_test

import (
	"strings"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A prompt streams its answer in chunks, a tool call shows as tool_call
// then tool_call_update, the session is an "acp" one, and after a restart
// session/load replays the conversation and the session goes on.
func TestServe_PromptToolCallAndLoadAfterRestart(t *testing.T) {
	h := newHome(t, llmtest.Echo(), "")
	r := h.start(acpserver.Options{})
	init := r.initialize()
	assert.True(t, init.AgentCapabilities.LoadSession)
	assert.True(t, init.AgentCapabilities.PromptCapabilities.EmbeddedContext)
	assert.False(t, init.AgentCapabilities.PromptCapabilities.Image)
	sid := r.newSession()

	resp, err := r.prompt(sid, "hello there world")
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	lines := r.client.take()
	assert.Equal(t, "echo: hello there world", text(lines))
	assert.Greater(t, len(lines), 1, "streamed in chunks: %q", lines)

	resp, err = r.prompt(sid, "use list_dir {}")
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	lines = r.client.take()
	require.GreaterOrEqual(t, len(lines), 3, "%q", lines)
	assert.Regexp(t, `^tool_call \S+ read in_progress: list_dir$`, lines[0])
	callID := strings.Fields(lines[0])[1]
	assert.Equal(t, "tool_call_update "+callID+" completed: . is empty", lines[1])
	assert.Equal(t, "list_dir said: . is empty", text(lines[2:]))

	info, err := r.app.Loop.Session(r.ctx(), string(sid))
	require.NoError(t, err)
	assert.Equal(t, acpserver.Gateway, info.Gateway)

	r.stop()
	r = h.start(acpserver.Options{})
	r.initialize()
	_, err = r.conn.LoadSession(r.ctx(), acp.LoadSessionRequest{SessionId: sid, Cwd: "/", McpServers: []acp.McpServer{}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"user: hello there world",
		"agent: echo: hello there world",
		"user: use list_dir {}",
		"tool_call " + callID + " read in_progress: list_dir",
		"tool_call_update " + callID + " completed: . is empty",
		"agent: list_dir said: . is empty",
	}, r.client.take(), "the history, replayed before the answer")

	resp, err = r.prompt(sid, "again")
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, "echo: again", text(r.client.take()))

	_, err = r.conn.LoadSession(r.ctx(), acp.LoadSessionRequest{SessionId: "session_nope", Cwd: "/", McpServers: []acp.McpServer{}})
	var re *acp.RequestError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "no session session_nope: start one with session/new", re.Message)
}

// A call the policy asks about becomes session/request_permission with
// allow once / always / deny; the answer is the call's decision.
func TestServe_PermissionMapping(t *testing.T) {
	h := newHome(t, llmtest.Echo(), "mode: ask\n")
	r := h.start(acpserver.Options{})
	r.initialize()
	sid := r.newSession()

	for _, tc := range []struct {
		option acp.PermissionOptionId
		answer string
	}{
		{"deny", "list_dir said: " + runtime.DeniedResult(".")},
		{"", "list_dir said: " + runtime.DeniedResult(".")}, // a cancelled request denies
		{"allow_once", "list_dir said: . is empty"},
		{"allow_always", "list_dir said: . is empty"},
	} {
		t.Run(string(tc.option), func(t *testing.T) {
			r.client.mu.Lock()
			r.client.asked = nil
			r.client.answer = func(p acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
				if tc.option == "" {
					return acp.NewRequestPermissionOutcomeCancelled()
				}
				return acp.NewRequestPermissionOutcomeSelected(tc.option)
			}
			r.client.mu.Unlock()
			resp, err := r.prompt(sid, "use list_dir {}")
			require.NoError(t, err)
			assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
			// The permission request is handled beside the notifications,
			// in no order with them: set it apart.
			var lines, asked []string
			for _, l := range r.client.take() {
				if strings.HasPrefix(l, "permission ") {
					asked = append(asked, l)
				} else {
					lines = append(lines, l)
				}
			}
			assert.Equal(t, tc.answer, text(lines))
			require.Len(t, asked, 1)
			require.GreaterOrEqual(t, len(lines), 3, "%q", lines)
			assert.Regexp(t, `^tool_call \S+ read in_progress: list_dir$`, lines[0])
			assert.Equal(t, "permission "+strings.Fields(lines[0])[1], asked[0])
			lines = lines[1:]
			if strings.HasPrefix(string(tc.option), "allow") {
				assert.Regexp(t, `^tool_call_update \S+ in_progress: $`, lines[0], "allowed: it runs")
				assert.Regexp(t, `^tool_call_update \S+ completed: `, lines[1])
			} else {
				assert.Regexp(t, `^tool_call_update \S+ failed: `, lines[0], "denied: its result failed")
			}
			r.client.mu.Lock()
			defer r.client.mu.Unlock()
			require.Len(t, r.client.asked, 1)
			p := r.client.asked[0]
			assert.Equal(t, sid, p.SessionId)
			var kinds []acp.PermissionOptionKind
			for _, o := range p.Options {
				kinds = append(kinds, o.Kind)
			}
			assert.Equal(t, []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce,
				acp.PermissionOptionKindAllowAlways, acp.PermissionOptionKindRejectOnce}, kinds)
		})
	}

	r.client.mu.Lock()
	r.client.asked = nil
	r.client.mu.Unlock()
	_, err := r.prompt(sid, "use list_dir {}")
	require.NoError(t, err)
	assert.Equal(t, "list_dir said: . is empty", text(r.client.take()))
	assert.Empty(t, r.client.asked, "allow_always holds for the agent's later calls")
}

// session/cancel while the model streams answers the prompt cancelled;
// the session takes the next prompt.
func TestServe_CancelMidStream(t *testing.T) {
	var calls atomic.Int32
	echo := llmtest.Echo()
	h := newHome(t, func(rq llmtest.RecordedRequest) llmtest.Reply {
		if calls.Add(1) == 1 {
			return llmtest.Reply{Text: "one two three four", Fault: llmtest.Stall, FaultAfter: 1}
		}
		return echo(rq)
	}, "")
	r := h.start(acpserver.Options{})
	r.initialize()
	sid := r.newSession()

	done := make(chan acp.PromptResponse, 1)
	go func() {
		resp, err := r.prompt(sid, "count")
		assert.NoError(t, err)
		done <- resp
	}()
	r.client.waitFor(t, "agent: one")
	require.NoError(t, r.conn.Cancel(r.ctx(), acp.CancelNotification{SessionId: sid}))
	resp := <-done
	assert.Equal(t, acp.StopReasonCancelled, resp.StopReason)
	r.client.take()

	resp, err := r.prompt(sid, "after")
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, "echo: after", text(r.client.take()))
}

// Prompts: embedded text resources are inlined, links kept as links,
// images refused, sizes bounded, unknown sessions refused.
func TestServe_PromptContent(t *testing.T) {
	h := newHome(t, llmtest.Echo(), "")
	r := h.start(acpserver.Options{MaxPrompt: 200})
	r.initialize()
	sid := r.newSession()

	resp, err := r.conn.Prompt(r.ctx(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{
		acp.TextBlock("see "), acp.ResourceLinkBlock("a.go", "file:///a.go"), acp.TextBlock(" and"),
		acp.ResourceBlock(acp.EmbeddedResourceResource{TextResourceContents: &acp.TextResourceContents{Uri: "file:///b.txt", Text: "B"}}),
	}})
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, "echo: see [a.go](file:///a.go) and\n\n<file uri=\"file:///b.txt\">\nB\n</file>", text(r.client.take()))

	for _, tc := range []struct {
		sid    acp.SessionId
		blocks []acp.ContentBlock
		code   int
		msg    string
	}{
		{sid, []acp.ContentBlock{acp.ImageBlock("AAAA", "image/png")}, -32602, "images and audio are not supported by this agent: send text"},
		{sid, []acp.ContentBlock{acp.TextBlock(strings.Repeat("x", 201))}, -32602, "the prompt is over 200 bytes: send less text, or link large files instead of embedding them"},
		{sid, []acp.ContentBlock{acp.TextBlock("  ")}, -32602, "the prompt is empty: type something to send"},
		{"session_other", []acp.ContentBlock{acp.TextBlock("hi")}, -32002, "no session session_other on this connection: create one with session/new or load it with session/load"},
	} {
		_, err := r.conn.Prompt(r.ctx(), acp.PromptRequest{SessionId: tc.sid, Prompt: tc.blocks})
		var re *acp.RequestError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, tc.code, re.Code)
		assert.Equal(t, tc.msg, re.Message)
	}
}
