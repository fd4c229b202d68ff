package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A summary that fails while the next message waits for it trims the
// history and tells the session once (history_trimmed); that note is not
// the waiting turn's failure: its stream ends with done.
func TestCompact_TrimNoteIsNotTheNextTurnsError(t *testing.T) {
	summaryAsked := make(chan struct{}, 1)
	release := make(chan struct{})
	e := newAPIEnv(t, func(req llmtest.RecordedRequest) llmtest.Reply {
		if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You summarise a conversation") {
			summaryAsked <- struct{}{}
			<-release
			return llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "no summaries today"}
		}
		return llmtest.Echo()(req)
	})
	spec := filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(spec)
	require.NoError(t, err)
	const at = "    max_tool_iterations: 10\n"
	require.Contains(t, string(data), at)
	require.NoError(t, os.WriteFile(spec, []byte(strings.Replace(string(data), at, at+"    context:\n      max_history_tokens: 300\n", 1)), 0o644))
	sid := e.session()
	sub, err := e.loop.Follow(context.Background(), sid, e.lastSeq(sid))
	require.NoError(t, err)
	defer sub.Close()
	long := strings.Repeat("words ", 150)
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"one `+long+`"}`, http.StatusOK, nil)
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"two `+long+`"}`, http.StatusOK, nil)
	select {
	case <-summaryAsked:
	case <-time.After(10 * time.Second):
		t.Fatal("the window over its budget asked for no summary")
	}
	done := make(chan *http.Response, 1)
	go func() { done <- e.do("POST", "/api/v1/sessions/"+sid+"/stream", `{"content":"three"}`) }()
	for ev := range sub.C() { // the third message is stored and waits for the summary
		if ev.Type == runtime.EvUserMessage && ev.Content == "three" {
			break
		}
	}
	close(release)
	resp := <-done
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs := newSSEScan(resp.Body).all()
	require.NotEmpty(t, evs)
	assert.Equal(t, "done", evs[len(evs)-1].Name, "Agnx's stream of the waiting turn ends done, not error: %v", evs)
	var notes int
	require.NoError(t, runtime.ReadEvents(e.st, sid, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvError && ev.Code == runtime.CodeHistoryTrimmed {
			notes++
		}
		return nil
	}))
	assert.Equal(t, 1, notes, "the session is told once")
}
