package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A failed model call is 500 server_error with the provider's sentence;
// streamed, the error object ends the stream and the client's Err says
// it.
func TestOpenAI_ProviderFailure(t *testing.T) {
	notFound := llmtest.Reply{Status: 404, ErrorMessage: `model "m" not found, try pulling it first`}
	_, c := oaEnv(t, llmtest.Script(notFound, notFound))
	ctx := oaCtx(t)
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi})
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
	assert.Equal(t, "server_error", apiErr.Type)
	assert.Equal(t, "provider_error", apiErr.Code)
	assert.Contains(t, apiErr.Message, "ollama pull")

	s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi})
	for s.Next() {
		assert.Empty(t, s.Current().Choices[0].FinishReason, "no chunk says the turn finished")
	}
	require.Error(t, s.Err())
	assert.Contains(t, s.Err().Error(), "ollama pull")
}

// The caller's session is found from the store's kv, not the server's
// memory: a new server (as after a restart) goes on in the same session.
func TestOpenAI_SessionIsDurable(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	ctx := oaCtx(t)
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("one")}, User: openai.String("bob")})
	require.NoError(t, err)
	require.Len(t, e.oaSessions(), 1)
	sid := e.oaSessions()[0].ID
	kv, err := e.loop.KV(context.Background(), "chat/openai/assistant:bob")
	require.NoError(t, err)
	assert.Contains(t, string(kv), sid, "kept as chats.Chats keeps a gateway's chat")

	e.serve(e.opts.Agents, func(o *httpapi.Options) { o.APIToken = oaToken })
	again := oaClient(e, oaToken)
	_, err = again.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("one"), openai.AssistantMessage("echo: one"),
			openai.UserMessage("two")}, User: openai.String("bob")})
	require.NoError(t, err)
	require.Len(t, e.oaSessions(), 1)
	assert.Equal(t, []string{"one", "two"}, e.userMessages(sid))
}

// Server.Close ends an open completion stream with an error object, so a
// graceful shutdown does not wait for the turn.
func TestOpenAI_StreamEndsOnClose(t *testing.T) {
	release := make(chan struct{})
	e, c := oaEnv(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		<-release
		return llmtest.Reply{Text: "late"}
	})
	t.Cleanup(func() { close(release) })
	s := c.Chat.Completions.NewStreaming(oaCtx(t), openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	require.True(t, s.Next(), "the role chunk comes at once: %v", s.Err())
	assert.Equal(t, "assistant", s.Current().Choices[0].Delta.Role)
	e.api.Close()
	for s.Next() {
	}
	require.Error(t, s.Err())
	assert.Contains(t, s.Err().Error(), "shutting down")
}

// Two requests of one caller at once: the second message waits behind the
// first turn, and each request answers with its own turn's answer.
func TestOpenAI_QueuedBehindRunningTurn(t *testing.T) {
	started, release := make(chan struct{}, 4), make(chan struct{})
	echo := llmtest.Echo()
	e, c := oaEnv(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "a" {
			started <- struct{}{}
			<-release
		}
		return echo(r)
	})
	ctx := oaCtx(t)
	ask := func(text string) (string, error) {
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
		if err != nil {
			return "", err
		}
		return res.Choices[0].Message.Content, nil
	}
	type answer struct {
		text string
		err  error
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	go func() { a, err := ask("a"); first <- answer{a, err} }()
	<-started
	sessions := e.oaSessions()
	require.Len(t, sessions, 1)
	sub, err := e.loop.Follow(ctx, sessions[0].ID, runtime.Live)
	require.NoError(t, err)
	go func() { a, err := ask("b"); second <- answer{a, err} }()
	for ev := range sub.C() {
		if ev.Type == runtime.EvUserMessage && ev.Content == "b" {
			break // queued behind the running turn
		}
	}
	sub.Close()
	close(release)
	a, b := <-first, <-second
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	assert.Equal(t, "echo: a", a.text)
	assert.Equal(t, "echo: b", b.text)
}
