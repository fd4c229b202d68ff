package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

const oaToken = "s3cret-token"

// oaEnv is the API with a token and the official OpenAI Go client
// pointed at it.
func oaEnv(t *testing.T, h llmtest.Handler) (*apiEnv, openai.Client) {
	t.Helper()
	e := newAPIEnv(t, h, func(o *httpapi.Options) { o.APIToken = oaToken })
	return e, oaClient(e, oaToken)
}

func oaClient(e *apiEnv, token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1/"), option.WithAPIKey(token),
		option.WithMaxRetries(0), option.WithHTTPClient(e.srv.Client()))
}

func oaCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// oaSession returns the one session the endpoint started for the agent.
func (e *apiEnv) oaSessions() []runtime.SessionInfo {
	e.t.Helper()
	list, err := e.loop.Sessions(context.Background())
	require.NoError(e.t, err)
	var out []runtime.SessionInfo
	for _, s := range list {
		if s.Gateway == "openai" {
			out = append(out, s)
		}
	}
	return out
}

// userMessages lists the contents of a session's user messages.
func (e *apiEnv) userMessages(sid string) []string {
	e.t.Helper()
	var out []string
	require.NoError(e.t, runtime.ReadEvents(e.st, sid, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvUserMessage {
			out = append(out, ev.Content)
		}
		return nil
	}))
	return out
}

func TestOpenAI_Models(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	page, err := c.Models.List(oaCtx(t))
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.Equal(t, "assistant", page.Data[0].ID)
	assert.Equal(t, "agnx-lite", page.Data[0].OwnedBy)
	assert.NotZero(t, page.Data[0].Created)
	_ = e
}

// A non-streaming completion is the agent's answer; a client that resends
// the whole history with a new message adds only that message to the
// caller's one session, and the client's system message is not sent.
func TestOpenAI_CompletionAndResentHistory(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	ctx := oaCtx(t)
	var httpResp *http.Response
	res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be a pirate"), openai.UserMessage("hello")}},
		option.WithResponseInto(&httpResp))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.ID, "chatcmpl-"), res.ID)
	assert.Equal(t, "chat.completion", string(res.Object))
	assert.Equal(t, "assistant", res.Model)
	require.Len(t, res.Choices, 1)
	assert.Equal(t, "echo: hello", res.Choices[0].Message.Content)
	assert.Equal(t, "stop", res.Choices[0].FinishReason)
	assert.Positive(t, res.Usage.TotalTokens)
	assert.Equal(t, res.Usage.PromptTokens+res.Usage.CompletionTokens, res.Usage.TotalTokens)
	sid := httpResp.Header.Get("X-Agnx-Session-Id")
	require.NotEmpty(t, sid)

	res, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be a pirate"), openai.UserMessage("hello"),
			openai.AssistantMessage("echo: hello"), openai.UserMessage("and"), openai.UserMessage("again")}})
	require.NoError(t, err)
	assert.Equal(t, "echo: and\n\nagain", res.Choices[0].Message.Content)

	sessions := e.oaSessions()
	require.Len(t, sessions, 1, "one session per caller and agent")
	assert.Equal(t, sid, sessions[0].ID)
	assert.Equal(t, "assistant:default", sessions[0].ChatID)
	assert.Equal(t, []string{"hello", "and\n\nagain"}, e.userMessages(sid), "the resent history is not stored twice")
	for _, req := range e.fake.Requests() {
		for _, m := range req.Messages {
			assert.NotContains(t, m.Content, "pirate", "the client's system message is ignored")
		}
	}
}

// The user field, else X-Agnx-Session-Key, chooses the caller's session.
func TestOpenAI_SessionPerCaller(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	ctx := oaCtx(t)
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi, User: openai.String("alice")})
	require.NoError(t, err)
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi},
		option.WithHeader("X-Agnx-Session-Key", "kitchen"))
	require.NoError(t, err)
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi, User: openai.String("alice")})
	require.NoError(t, err)
	chats := map[string]int{}
	for _, s := range e.oaSessions() {
		chats[s.ChatID] = len(e.userMessages(s.ID))
	}
	assert.Equal(t, map[string]int{"assistant:alice": 2, "assistant:kitchen": 1}, chats)
}

// A streamed completion carries the answer's tokens as deltas, a last
// chunk with finish_reason, the usage when asked, then [DONE].
func TestOpenAI_Streaming(t *testing.T) {
	_, c := oaEnv(t, llmtest.Echo())
	stream := c.Chat.Completions.NewStreaming(oaCtx(t), openai.ChatCompletionNewParams{Model: "assistant",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("one two three four")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	var acc openai.ChatCompletionAccumulator
	deltas := 0
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		assert.True(t, strings.HasPrefix(ch.ID, "chatcmpl-"))
		if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			deltas++
		}
	}
	require.NoError(t, stream.Err())
	require.Len(t, acc.Choices, 1)
	assert.Equal(t, "echo: one two three four", acc.Choices[0].Message.Content)
	assert.Equal(t, "stop", acc.Choices[0].FinishReason)
	assert.Greater(t, deltas, 1, "the answer streams in pieces")
	assert.Positive(t, acc.Usage.TotalTokens)
}

// Tool calls run server-side: the client sees only the answer, streaming
// or not.
func TestOpenAI_ToolUsingAgent(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	require.NoError(t, os.WriteFile(filepath.Join(e.cfg.DataDir, "note.txt"), []byte("x"), 0o644))
	ctx := oaCtx(t)
	res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("use list_dir {}")}})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Choices[0].Message.Content, "list_dir said: "), res.Choices[0].Message.Content)
	assert.Empty(t, res.Choices[0].Message.ToolCalls)

	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("use list_dir {}"),
			openai.AssistantMessage(res.Choices[0].Message.Content), openai.UserMessage("use list_dir {} again")}})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	assert.True(t, strings.HasPrefix(acc.Choices[0].Message.Content, "list_dir said: "), acc.Choices[0].Message.Content)
}

// A call that needs an approval is denied at once, with the sentence
// saying why, and the turn goes on to an answer.
func TestOpenAI_ApprovalDenied(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	e.askPolicy()
	ctx := oaCtx(t)
	for _, stream := range []bool{false, true} {
		msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("use list_dir {}")}
		var content string
		if stream {
			s := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: msgs})
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			require.NoError(t, s.Err())
			content = acc.Choices[0].Message.Content
		} else {
			res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: msgs})
			require.NoError(t, err)
			content = res.Choices[0].Message.Content
		}
		assert.Contains(t, content, "list_dir said: Command", "stream %v", stream)
		assert.Contains(t, content, "was denied by the user")
		assert.Contains(t, content, "an OpenAI client cannot answer it: send the header X-Agnx-Approvals: wait to answer it in the web UI instead")
	}
	sessions := e.oaSessions()
	require.Len(t, sessions, 1)
	assert.NotEqual(t, runtime.SessionPaused, sessions[0].Status, "nothing waits for a decision")
}

// Refusals and bad requests are in OpenAI's error shape.
func TestOpenAI_Errors(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	ctx := oaCtx(t)
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	var apiErr *openai.Error

	wrong := oaClient(e, "wrong")
	_, err := wrong.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi})
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)
	assert.Equal(t, "invalid_api_key", apiErr.Code)
	assert.Equal(t, "invalid_request_error", apiErr.Type)
	assert.Contains(t, apiErr.Message, "Authorization: Bearer")
	_, err = wrong.Models.List(ctx)
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)

	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "nobody", Messages: hi})
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	assert.Equal(t, "model_not_found", apiErr.Code)
	assert.Equal(t, "model", apiErr.Param)

	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi"), openai.AssistantMessage("hello")}})
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	assert.Equal(t, "invalid_request_error", apiErr.Type)
	assert.Equal(t, "messages", apiErr.Param)

	resp := e.do("POST", "/v1/chat/completions", `{"model":`, "Authorization: Bearer "+oaToken)
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, jsonDecode(resp, &body))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", body.Error.Type)
	assert.Contains(t, body.Error.Message, "JSON")
	assert.Empty(t, e.oaSessions(), "no session for a request refused")
}

// A turn past the agent's daily token budget is 429.
func TestOpenAI_TokenBudget(t *testing.T) {
	e, c := oaEnv(t, func(llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "hello", Usage: llmtest.Usage{Prompt: 40, Completion: 2}}
	})
	file := filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "# daily_token_budget: 200000", "daily_token_budget: 30", 1)
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
	ctx := oaCtx(t)
	hi := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi})
	require.NoError(t, err)
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant", Messages: hi})
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Equal(t, "token_budget", apiErr.Code)
	assert.Contains(t, apiErr.Message, "daily token budget")
}

// With X-Agnx-Approvals: wait, a call that needs an approval waits for a
// person to answer it elsewhere (here POST …/approve, as the web UI does)
// and the client gets the answer of the allowed call.
func TestOpenAI_ApprovalWaits(t *testing.T) {
	e, _ := oaEnv(t, llmtest.Echo())
	e.askPolicy()
	ctx := oaCtx(t)
	req, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"assistant","stream":true,"messages":[{"role":"user","content":"use list_dir {}"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+oaToken)
	req.Header.Set(httpapi.ApprovalsHeader, "wait")
	resp, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("X-Agnx-Session-Id")
	require.NotEmpty(t, sid)

	_, scan := e.openStream(ctx, sid, "", "Authorization: Bearer "+oaToken)
	var ask pendingJSON
	for {
		ev, ok := scan.next()
		require.True(t, ok, "the log ended before approval_required")
		if ev.Name == "approval_required" {
			ev.decode(t, &ask)
			break
		}
	}
	e.call("POST", "/api/v1/sessions/"+sid+"/approve", `{"call_id":"`+ask.CallID+`","decision":"allow_once"}`,
		http.StatusOK, nil, "Authorization: Bearer "+oaToken)

	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var answer strings.Builder
	for _, m := range regexp.MustCompile(`"delta":\{"content":"([^"]*)"`).FindAllStringSubmatch(string(body), -1) {
		answer.WriteString(m[1])
	}
	assert.True(t, strings.HasPrefix(answer.String(), "list_dir said: "), answer.String())
	assert.NotContains(t, answer.String(), "denied")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(string(body)), "data: [DONE]"), "%s", body)
}
