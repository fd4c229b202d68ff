package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// agnxParser is Agnx's client-side SSE parser and stream consumer, written
// from AGNX-COMPAT.md §7: each network chunk is UTF-8-decoded alone and
// dropped when invalid; lines split at \n lose a trailing \r; data:,
// event:, id: and retry: lose one space; ':' lines and unknown fields are
// ignored; a blank line ends a block that has data, event, id or retry.
// It aborts on an unknown event name, a block without event:, an id:- or
// retry:-only block and data not matching the table; events must come
// as start, token*, then one terminal event, then the end.
type agnxParser struct {
	buf     string
	block   agnxBlock
	events  []agnxEvent
	dropped int // chunks that were not valid UTF-8
}

type agnxBlock struct {
	event, data, id, retry *string
}

type agnxEvent struct {
	Name string
	Data map[string]any
}

var errAgnxAbort = errors.New("SseParseError")

func (p *agnxParser) feed(chunk []byte) error {
	if !utf8.Valid(chunk) {
		p.dropped++
		return nil
	}
	p.buf += string(chunk)
	for {
		i := strings.IndexByte(p.buf, '\n')
		if i < 0 {
			return nil
		}
		line := strings.TrimSuffix(p.buf[:i], "\r")
		p.buf = p.buf[i+1:]
		if err := p.line(line); err != nil {
			return err
		}
	}
}

func (p *agnxParser) line(line string) error {
	if line == "" {
		b := p.block
		p.block = agnxBlock{}
		if b.data == nil && b.event == nil && b.id == nil && b.retry == nil {
			return nil
		}
		return p.dispatch(b)
	}
	if line[0] == ':' {
		return nil
	}
	for _, f := range []string{"data", "event", "id", "retry"} {
		if v, ok := strings.CutPrefix(line, f+":"); ok {
			v = strings.TrimPrefix(v, " ")
			switch f {
			case "data":
				if p.block.data != nil {
					v = *p.block.data + "\n" + v
				}
				p.block.data = &v
			case "event":
				p.block.event = &v
			case "id":
				p.block.id = &v
			case "retry":
				p.block.retry = &v
			}
		}
	}
	return nil
}

func (p *agnxParser) dispatch(b agnxBlock) error {
	if b.event == nil {
		return fmt.Errorf("%w: a block without event: (data %v, id %v, retry %v)", errAgnxAbort, b.data != nil, b.id != nil, b.retry != nil)
	}
	data := ""
	if b.data != nil {
		data = *b.data
	}
	ev := agnxEvent{Name: *b.event}
	str := func(m map[string]any, key string) error {
		if _, ok := m[key].(string); !ok {
			return fmt.Errorf("%w: %s data %s: %q is not a string", errAgnxAbort, ev.Name, data, key)
		}
		return nil
	}
	parse := func() error {
		if err := json.Unmarshal([]byte(data), &ev.Data); err != nil || ev.Data == nil {
			return fmt.Errorf("%w: %s data %q is not a JSON object", errAgnxAbort, ev.Name, data)
		}
		return nil
	}
	var err error
	switch ev.Name {
	case "start", "cancelled": // not parsed
	case "token":
		if err = parse(); err == nil {
			err = str(ev.Data, "content")
		}
	case "error":
		if err = parse(); err == nil {
			err = str(ev.Data, "message")
		}
	case "approval_required":
		if err = parse(); err == nil {
			if err = str(ev.Data, "call_id"); err == nil {
				err = str(ev.Data, "command")
			}
		}
	case "done":
		if err = parse(); err == nil {
			if err = str(ev.Data, "message_id"); err == nil {
				err = checkUsage(ev.Data["usage"])
			}
		}
	default:
		err = fmt.Errorf("%w: unknown event type %q", errAgnxAbort, ev.Name)
	}
	if err != nil {
		return err
	}
	return p.order(ev)
}

func checkUsage(u any) error {
	if u == nil {
		return nil
	}
	m, ok := u.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: usage is neither null nor an object", errAgnxAbort)
	}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens"} {
		n, ok := m[k].(float64)
		if !ok || n < 0 || n > math.MaxUint32 || n != math.Trunc(n) {
			return fmt.Errorf("%w: usage.%s is not a u32", errAgnxAbort, k)
		}
	}
	return nil
}

// order checks start, token*, one terminal event, nothing after.
func (p *agnxParser) order(ev agnxEvent) error {
	n := len(p.events)
	switch {
	case n == 0 && ev.Name != "start":
		return fmt.Errorf("the stream began with %s, not start", ev.Name)
	case n > 0 && ev.Name == "start":
		return errors.New("a second start")
	case n > 0 && agnxTerminal(p.events[n-1].Name):
		return fmt.Errorf("%s after the terminal %s", ev.Name, p.events[n-1].Name)
	}
	p.events = append(p.events, ev)
	return nil
}

func agnxTerminal(name string) bool {
	switch name {
	case "done", "error", "cancelled", "approval_required":
		return true
	}
	return false
}

// readAgnx reads a response body as Agnx's client does, chunk by chunk,
// until it ends; it fails the test on an abort or an end without a
// terminal event.
func readAgnx(t *testing.T, body io.Reader) []agnxEvent {
	t.Helper()
	var p agnxParser
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			require.NoError(t, p.feed(buf[:n]))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	assert.Zero(t, p.dropped, "a chunk was not valid UTF-8: Agnx's client drops it")
	require.NotEmpty(t, p.events)
	require.True(t, agnxTerminal(p.events[len(p.events)-1].Name), "SseStreamEnded: no terminal event")
	return p.events
}

func agnxNames(evs []agnxEvent) []string {
	var out []string
	for _, e := range evs {
		if e.Name != "token" || len(out) == 0 || out[len(out)-1] != "token" {
			out = append(out, e.Name)
		}
	}
	return out
}

func (e *apiEnv) agnxStream(sid, content string) []agnxEvent {
	e.t.Helper()
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/stream", `{"content":"`+content+`"}`)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
	return readAgnx(e.t.(*testing.T), resp.Body)
}

// The parser itself: what it must abort on.
func TestAgnxParser_Aborts(t *testing.T) {
	for _, bad := range []string{
		"event: start\ndata: {}\n\nevent: message\ndata: {}\n\n",
		"data: {}\n\n",
		"id: 4\n\n",
		"retry: 100\n\n",
		"event: start\ndata: {}\n\nevent: done\ndata: {\"usage\":null}\n\n",
		"event: start\ndata: {}\n\nevent: token\ndata: {\"content\":1}\n\n",
	} {
		var p agnxParser
		assert.ErrorIs(t, p.feed([]byte(bad)), errAgnxAbort, bad)
	}
	var p agnxParser
	require.NoError(t, p.feed([]byte(": keep-alive\n\nid: 3\nevent: start\r\ndata: {}\n\n")))
	require.NoError(t, p.feed([]byte("event: token\ndata: {\"content\":\"h\xc3")))
	require.NoError(t, p.feed([]byte("\xa9\"}\n\n")), "chunks cut inside a character are dropped, not an error")
	assert.Equal(t, 2, p.dropped, "both halves are lost: the server must write whole events")
	assert.Equal(t, []string{"start"}, agnxNames(p.events))
}

// A plain turn on /stream: start, tokens, done with a message_id, chunk
// by chunk as Agnx's client reads it; the same id on POST .../messages'
// form.
func TestAgnxStream_Done(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	evs := e.agnxStream(sid, "héllo wörld")
	assert.Equal(t, []string{"start", "token", "done"}, agnxNames(evs))
	done := evs[len(evs)-1].Data
	assert.Regexp(t, msgIDRe, done["message_id"])
	assert.NotNil(t, done["usage"])
	// The id is the stored message's: the export (the log) gives it back.
	resp := e.do("GET", "/api/v1/sessions/"+sid+"/export", "")
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var last struct {
		Seq       uint64    `json:"seq"`
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
	}
	for {
		var ev struct {
			Seq       uint64    `json:"seq"`
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
		}
		if dec.Decode(&ev) != nil {
			break
		}
		if ev.Type == "assistant_response" {
			last = ev
		}
	}
	require.NotZero(t, last.Seq)
	assert.Equal(t, done["message_id"], runtime.MessageID(sid, last.Seq, last.Timestamp))

	var reply struct {
		MessageID string `json:"message_id"`
		Role      string `json:"role"`
		Content   string `json:"content"`
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"again"}`, http.StatusOK, &reply)
	assert.Regexp(t, msgIDRe, reply.MessageID)
	assert.NotEqual(t, done["message_id"], reply.MessageID)
	assert.Equal(t, "assistant", reply.Role)
	assert.Equal(t, "echo: again", reply.Content)
}

// Tools run on /stream (lite) but show nothing Agnx's client does not
// know; a failed model call is one error event.
func TestAgnxStream_ToolsAndFailure(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	evs := e.agnxStream(sid, "use list_dir {}")
	assert.Equal(t, []string{"start", "token", "done"}, agnxNames(evs))

	f := newAPIEnv(t, llmtest.Script(llmtest.Reply{Status: 404, ErrorMessage: `model "m" not found`}))
	evs = f.agnxStream(f.session(), "hi")
	assert.Equal(t, []string{"start", "error"}, agnxNames(evs))
	assert.Contains(t, evs[1].Data["message"], "qwen3:1.7b")
}

// A turn that used all its tool rounds fails, as in Agnx: 500 on POST
// .../messages, error on /stream.
func TestAgnx_ToolLimit(t *testing.T) {
	e := newAPIEnv(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if len(r.Tools) == 0 {
			return llmtest.Reply{Text: "the folder is empty"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}
	})
	spec := filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(spec)
	require.NoError(t, err)
	data = bytes.Replace(data, []byte("max_tool_iterations: 10"), []byte("max_tool_iterations: 1"), 1)
	require.NoError(t, os.WriteFile(spec, data, 0o644))
	sid := e.session()
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"look"}`), http.StatusInternalServerError, "internal_error")
	assert.Contains(t, p.Detail, "max_tool_iterations")

	evs := e.agnxStream(sid, "look again")
	assert.Equal(t, []string{"start", "token", "error"}, agnxNames(evs))
	assert.Contains(t, evs[len(evs)-1].Data["message"], "max_tool_iterations")
}

// Agnx's CLI reads /stream until approval_required, drops the connection
// and POSTs /approve: the turn waits for it, whatever on_disconnect says,
// and /approve returns the rest.
func TestAgnx_HangUpThenApprove(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.askPolicy()
	sid := e.session()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/api/v1/sessions/"+sid+"/stream",
		strings.NewReader(`{"content":"use list_dir {}"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	evs := readAgnx(t, resp.Body) // the server ends the response after approval_required
	cancel()
	resp.Body.Close()
	assert.Equal(t, []string{"start", "approval_required"}, agnxNames(evs))
	callID, _ := evs[len(evs)-1].Data["call_id"].(string)
	command, _ := evs[len(evs)-1].Data["command"].(string)

	var info struct{ Status string }
	e.call("GET", "/api/v1/sessions/"+sid, "", http.StatusOK, &info)
	assert.Equal(t, "paused", info.Status)

	var done completeJSON
	e.call("POST", "/api/v1/sessions/"+sid+"/approve",
		`{"call_id":"`+callID+`","command":"`+command+`","decision":"allow_once"}`, http.StatusOK, &done)
	assert.Equal(t, "complete", done.Status)
	assert.Regexp(t, msgIDRe, done.MessageID)
	assert.Contains(t, done.Content, "list_dir said:")
	e.call("GET", "/api/v1/sessions/"+sid, "", http.StatusOK, &info)
	assert.Equal(t, "active", info.Status)
}

// Deny: the tool result is Agnx's sentence and the turn goes on; a wrong
// call_id is 400 while the right one waits; a message sent meanwhile is
// answered after the turn, not interleaved with it.
func TestAgnx_DenyAndWrongCall(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	e.askPolicy()
	sid := e.session()
	var ask pendingJSON
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"use list_dir {}"}`, http.StatusAccepted, &ask)

	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"nope","decision":"deny"}`),
		http.StatusBadRequest, "invalid_request")
	assert.Contains(t, p.Detail, "nope")

	queued := make(chan *http.Response, 1)
	go func() { queued <- e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"next"}`) }()

	var done completeJSON
	e.call("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"deny"}`, http.StatusOK, &done)
	assert.Equal(t, "complete", done.Status)
	denied := "Command '" + ask.Command + "' was denied by the user. Please try a different approach."
	assert.Contains(t, done.Content, denied, "Echo repeats the tool result")

	resp := <-queued
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var next struct{ Content string }
	require.NoError(t, jsonDecode(resp, &next))
	assert.Equal(t, "echo: next", next.Content)
}

// Lite's events come only to a client that asks, by name (or all), with
// ?events= or X-Agnx-Events; GET .../events shows Agnx's six by default.
func TestStream_OptInEvents(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	sid := e.session()
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/stream", `{"content":"use list_dir {}"}`, "X-Agnx-Events: tool_call, nonsense")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var names []string
	for _, ev := range newSSEScan(resp.Body).all() {
		if ev.Name != "token" {
			names = append(names, ev.Name)
		}
	}
	assert.Equal(t, []string{"start", "tool_call", "done"}, names)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, _ = e.openStream(ctx, sid, "?after=0&until=turn_end&events=")
	evs := readAgnxBody(t, resp.Body)
	assert.Equal(t, []string{"done"}, agnxNames(evs), "the log replayed in Agnx's view: the turn's end")

	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/stream?events="+strings.Repeat("a", 600), `{"content":"x"}`),
		http.StatusBadRequest, "invalid_request")
	assert.Contains(t, p.Detail, "events")
}

// readAgnxBody parses a GET .../events body in Agnx's view, which has no
// start event: only the event table is checked.
func readAgnxBody(t *testing.T, body io.Reader) []agnxEvent {
	t.Helper()
	p := agnxParser{events: []agnxEvent{{Name: "start"}}}
	data, err := io.ReadAll(body)
	require.NoError(t, err)
	require.NoError(t, p.feed(data))
	return p.events[1:]
}
