package httpapi_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

var errModelMissing = llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`}

// untilPulled answers as Ollama without the model until pulled is set.
func untilPulled(pulled *atomic.Bool) llmtest.Handler {
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if !pulled.Load() {
			return errModelMissing
		}
		return llmtest.Reply{Text: "echo: " + r.LastUser()}
	}
}

// The caller's session is the endpoint's own: a first turn that never
// reached a model leaves none, streaming or not, and the client gets the
// error; the next request starts a session that is kept.
func TestOpenAI_NoSessionForAFailedFirstTurn(t *testing.T) {
	var pulled atomic.Bool
	e, c := oaEnv(t, untilPulled(&pulled))
	ctx := oaCtx(t)
	hi := openai.ChatCompletionNewParams{Model: "assistant", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}

	_, err := c.Chat.Completions.New(ctx, hi)
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Contains(t, apiErr.Message, "ollama pull qwen3:1.7b")
	assert.Empty(t, e.oaSessions())

	stream := c.Chat.Completions.NewStreaming(ctx, hi)
	for stream.Next() {
	}
	require.Error(t, stream.Err())
	assert.Contains(t, stream.Err().Error(), "ollama pull qwen3:1.7b")
	assert.Empty(t, e.oaSessions())

	pulled.Store(true)
	resp, err := c.Chat.Completions.New(ctx, hi)
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", resp.Choices[0].Message.Content)
	list := e.oaSessions()
	require.Len(t, list, 1)
	assert.Equal(t, []string{"hi"}, e.userMessages(list[0].ID))
}

// A session a client created by name is the client's: a failed first
// turn keeps it.
func TestOpenAI_ExplicitSessionKeptAfterAFailedTurn(t *testing.T) {
	e := newAPIEnv(t, llmtest.Script(errModelMissing))
	sid := e.session()
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hello"}`)
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
	info, err := e.loop.Session(oaCtx(t), sid)
	require.NoError(t, err)
	assert.Equal(t, 1, info.Turns)
	assert.Equal(t, []string{"hello"}, e.userMessages(sid))
	assert.Equal(t, runtime.SessionActive, info.Status)
}

// POST …/discard removes a session nothing from a model reached, for the
// client that started it (the CLI, the web page), and keeps one a model
// answered: 204, then 409 session_answered; an unknown id is 404.
func TestDiscardUnanswered_OverHTTP(t *testing.T) {
	var pulled atomic.Bool
	e := newAPIEnv(t, untilPulled(&pulled))
	sid := e.session()
	resp := e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hello"}`)
	require.NotEqual(t, http.StatusOK, resp.StatusCode)
	e.call("POST", "/api/v1/sessions/"+sid+"/discard", "", http.StatusNoContent, nil)
	requireProblem(t, e.do("GET", "/api/v1/sessions/"+sid, ""), http.StatusNotFound, "session_not_found")
	requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/discard", ""), http.StatusNotFound, "session_not_found")

	pulled.Store(true)
	kept := e.session()
	e.call("POST", "/api/v1/sessions/"+kept+"/messages", `{"content":"hello"}`, http.StatusOK, nil)
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+kept+"/discard", ""), http.StatusConflict, "session_answered")
	assert.Contains(t, p.Detail, "DELETE")
	e.call("GET", "/api/v1/sessions/"+kept, "", http.StatusOK, nil)
}
