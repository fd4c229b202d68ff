package agnxcompat

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// useBash is what makes the Echo model call bash with command.
func useBash(command string) string {
	return fmt.Sprintf(`use bash {"command":%q}`, command)
}

// send posts content and decodes the 200 SendMessageResponse.
func (k *contract) send(t *testing.T, id, content string) sendMessageResponse {
	t.Helper()
	r, err := k.c.postMessage(id, content)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "§6 POST messages: 200; got %s", r)
	v := decodeAs[sendMessageResponse](t, r, "§6 POST messages {message_id, role, content}")
	assert.True(t, strings.HasPrefix(*v.MessageID, "msg_"), "§6: ids are msg_<ULID>; got %q", *v.MessageID)
	assert.Equal(t, "assistant", *v.Role, "§6 POST messages: role assistant")
	return v
}

// pend posts a message whose tool call needs approval and decodes the 202.
func (k *contract) pend(t *testing.T, id, command string) pendingApprovalResponse {
	t.Helper()
	r, err := k.c.postMessage(id, useBash(command))
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, r.Status, "§6 POST messages: approval needed ⇒ 202 {session_id, call_id, command}; got %s", r)
	v := decodeAs[pendingApprovalResponse](t, r, "§6 202 {session_id, call_id, command}")
	assert.Equal(t, id, *v.SessionID, "§6 202: session_id")
	assert.NotEmpty(t, *v.CallID, "§6 202: call_id")
	assert.Equal(t, command, *v.Command, "§2/§6 202: command is the bash invocation")
	return v
}

func (k *contract) postMessages(t *testing.T) {
	id := k.session(t, "helper")
	v := k.send(t, id, "hello one")
	assert.Equal(t, "echo: hello one", *v.Content, "§6 POST messages: content is the final assistant text")
}

func (k *contract) getMessages(t *testing.T) {
	id := k.session(t, "helper")
	k.send(t, id, "hello one")
	k.send(t, id, "hello two")
	all, err := k.c.getMessages(id, 0)
	require.NoError(t, err, "§6 GET messages: the parent's get_messages fails")
	want := []string{"user:hello one", "assistant:echo: hello one", "user:hello two", "assistant:echo: hello two"}
	assert.Equal(t, want, roleContents(all), "§6 GET messages: user messages and final assistant texts, oldest first")
	first, err := k.c.getMessages(id, 1)
	require.NoError(t, err)
	assert.Equal(t, want[:1], roleContents(first), "§6 GET messages?limit=N: the first N")
	three, err := k.c.getMessages(id, 3)
	require.NoError(t, err)
	assert.Equal(t, want[:3], roleContents(three), "§6 GET messages?limit=N: the first N")
}

func roleContents(ms []messageResponse) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, *m.Role+":"+*m.Content)
	}
	return out
}

// stream posts content to …/stream and reads it as the parent's stream
// task does (to the end) or as the CLI does (to the first terminal).
func (k *contract) stream(t *testing.T, id, content string, likeCLI bool) (streamResult, *rawStream) {
	t.Helper()
	s, err := k.c.streamMessage(id, content, "")
	require.NoError(t, err, "§6 POST stream: the parent's stream_message fails")
	t.Cleanup(func() { s.Close() })
	assert.True(t, strings.HasPrefix(s.Header.Get("Content-Type"), "text/event-stream"),
		"§7 stream: text/event-stream; got %q", s.Header.Get("Content-Type"))
	return consumeStream(s, likeCLI), s
}

func (k *contract) streamPlain(t *testing.T) {
	id := k.session(t, "helper")
	r, _ := k.stream(t, id, "stream me", false)
	assertCleanStream(t, r, "plain turn")
	last := r.Events[len(r.Events)-1]
	require.Equal(t, "done", last.Kind, "§7: a plain turn ends with done; events %v", kinds(r.Events))
	assert.True(t, strings.HasPrefix(last.MessageID, "msg_"), "§7 done: message_id msg_<ULID>; got %q", last.MessageID)
	assert.Equal(t, "echo: stream me", tokens(r.Events), "§7: the tokens are the reply")
	all, err := k.c.getMessages(id, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"user:stream me", "assistant:echo: stream me"}, roleContents(all), "§6 GET messages after a stream")
}

func (k *contract) streamToolsNoLeak(t *testing.T) {
	id := k.session(t, "runner")
	r, _ := k.stream(t, id, useBash("echo leak-4"), false)
	assertCleanStream(t, r, "turn with a tool under mode: dangerous, no ?events=")
	require.Equal(t, "done", r.Events[len(r.Events)-1].Kind, "§7: events %v", kinds(r.Events))
	assert.Contains(t, tokens(r.Events), "bash said: leak-4", "§7: the tokens are the reply after the tool ran")
	all, err := k.c.getMessages(id, 0)
	require.NoError(t, err)
	for _, m := range all {
		assert.Contains(t, []string{"user", "assistant"}, *m.Role, "§6 GET messages: no tool messages")
		assert.NotEmpty(t, *m.Content, "§6 GET messages: final assistant texts only (no empty tool-call turns)")
	}
	assert.Len(t, all, 2, "§6 GET messages: the user message and the final assistant text; got %s", jsonText(roleContents(all)))
}

func (k *contract) approvalViaMessages(t *testing.T) {
	id := k.session(t, "helper")
	p := k.pend(t, id, "echo approved-1")
	s, err := k.c.getSession(id)
	require.NoError(t, err)
	assert.Equal(t, sessionStatus("paused"), *s.Status, "§6: after the 202 the session is paused")
	a, r, err := k.c.approveCommand(id, *p.CallID, *p.Command, "allow_once")
	require.NoError(t, err, "§6 approve allow_once: the parent's approve_command fails: %s", r)
	assert.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "complete", a.Status, "§6 approve: {status: complete, message_id, content}")
	assert.True(t, strings.HasPrefix(a.MessageID, "msg_"), "§6 approve: message_id msg_<ULID>; got %q", a.MessageID)
	assert.Contains(t, a.Content, "bash said: approved-1", "§6 approve: content is the final reply after the tool ran")
	all, err := k.c.getMessages(id, 0)
	require.NoError(t, err)
	require.Len(t, all, 2, "§6 GET messages: user + final assistant only; got %s", jsonText(roleContents(all)))
	assert.Equal(t, "user:"+useBash("echo approved-1"), roleContents(all)[0])
	assert.Equal(t, "assistant", *all[1].Role)
	k.eventuallyStatus(t, id, "active", "§6: idle after the turn ⇒ active")
}

// eventuallyStatus polls GET session until status is want: the contract
// gives no signal for a status change other than the 202.
func (k *contract) eventuallyStatus(t *testing.T, id string, want sessionStatus, msg string) {
	t.Helper()
	var last string
	ok := assert.Eventually(t, func() bool {
		s, err := k.c.getSession(id)
		if err != nil {
			last = err.Error()
			return false
		}
		last = string(*s.Status)
		return *s.Status == want
	}, 5*time.Second, 10*time.Millisecond)
	if !ok {
		t.Errorf("%s: want status %q, last saw %q", msg, want, last)
	}
}

func (k *contract) streamApprovalEnds(t *testing.T) {
	id := k.session(t, "helper")
	s, err := k.c.streamMessage(id, useBash("echo s-end"), "")
	require.NoError(t, err, "§6 POST stream: the parent's stream_message fails")
	defer s.Close()
	_ = s.conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := consumeStream(s, false)
	require.ErrorIs(t, r.Err, errSSEStreamEnded,
		"§7: after approval_required the response ends (the parent's stream task then reports SseStreamEnded); got %v, chunks %q", r.Err, r.Chunks)
	require.Zero(t, r.Dropped, "§7: whole events per flush")
	assert.Equal(t, []string{"start", "approval_required"}, kinds(r.Events), "§7 order: start, token*, approval_required, end")
	last := r.Events[len(r.Events)-1]
	assert.NotEmpty(t, last.CallID)
	assert.Equal(t, "echo s-end", last.Command, "§7 approval_required: command")
	k.eventuallyStatus(t, id, "paused", "§6: awaiting approval ⇒ paused")
}

func (k *contract) cliHangUp(t *testing.T) {
	id := k.session(t, "helper")
	r, s := k.stream(t, id, useBash("echo hung-up"), true)
	require.NoError(t, r.Err, "§7: chunks %q", r.Chunks)
	require.NotEmpty(t, r.Events)
	last := r.Events[len(r.Events)-1]
	require.Equal(t, "approval_required", last.Kind, "§7: events %v", kinds(r.Events))
	require.NoError(t, s.Close(), "the CLI drops the connection")
	a, hr, err := k.c.approveCommand(id, last.CallID, last.Command, "allow_once")
	require.NoError(t, err, "§7: the hang-up after approval_required must not cancel the turn: %s", hr)
	require.Equal(t, "complete", a.Status)
	assert.Contains(t, a.Content, "bash said: hung-up", "§6 approve: the rest of the turn")
}

func (k *contract) approveDeny(t *testing.T) {
	id := k.session(t, "helper")
	p := k.pend(t, id, "echo nope-3")
	a, r, err := k.c.approveCommand(id, *p.CallID, *p.Command, "deny")
	require.NoError(t, err, "§6 approve deny: %s", r)
	require.Equal(t, "complete", a.Status, "§6 deny ⇒ the turn continues")
	denied := "Command 'echo nope-3' was denied by the user. Please try a different approach."
	var seen []string
	found := false
	for _, req := range k.fakes.echo.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				seen = append(seen, m.Content)
				found = found || m.Content == denied
			}
		}
	}
	assert.True(t, found, "§6 deny: the model gets the tool result %q; tool results it saw: %q", denied, seen)
	assert.Equal(t, "bash said: "+denied, a.Content, "§6 deny: the turn continues to the model's reply")
}

func (k *contract) approveNonePending(t *testing.T) {
	id := k.session(t, "helper")
	_, r, err := k.c.approveCommand(id, "call_none", "ls", "allow_once")
	require.Error(t, err)
	assertProblem(t, r, 404, problemNotFound, "Not Found", "approve with nothing pending")
	assert.Contains(t, err.Error(), "no pending approval", "§6: the CLI matches `no pending approval` in the error")
}

func (k *contract) approveWrongCallID(t *testing.T) {
	id := k.session(t, "helper")
	p := k.pend(t, id, "echo wrong-id")
	_, r, err := k.c.approveCommand(id, "call_wrong", *p.Command, "allow_once")
	require.Error(t, err)
	assertProblem(t, r, 400, problemBadRequest, "Bad Request", "approve with a call_id that is not pending")
	a, r, err := k.c.approveCommand(id, *p.CallID, *p.Command, "deny")
	require.NoError(t, err, "§6: the pending approval survives a wrong call_id: %s", r)
	assert.Equal(t, "complete", a.Status)
}

func (k *contract) llmError(t *testing.T) {
	id := k.session(t, "broken")
	r, err := k.c.postMessage(id, "hello")
	require.NoError(t, err)
	assertProblem(t, r, 500, problemInternal, "Internal Server Error", "the model's call fails")
}
