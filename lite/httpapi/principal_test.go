package httpapi_test

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// withSessionAndMemory gives the template agent the session tool and a
// memory, before its first use builds it.
func withSessionAndMemory(t *testing.T, e *apiEnv) {
	t.Helper()
	file := filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	spec := strings.Replace(string(data), "  tools:\n",
		"  memory: {backend: filesystem}\n  tools:\n    - {type: builtin, name: session}\n", 1)
	require.NotEqual(t, string(data), spec)
	require.NoError(t, os.WriteFile(file, []byte(spec), 0o644))
}

// Two callers of the OpenAI endpoint (one token, two caller keys) are two
// principals (issue 34): bob's turns neither list nor read alice's
// conversation, and his memory recall does not find it; alice's own
// recall does.
func TestOpenAI_CallersDoNotReadEachOther(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	withSessionAndMemory(t, e)
	ctx := oaCtx(t)
	ask := func(user, text string) (answer, sid string) {
		t.Helper()
		var resp *http.Response
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "assistant",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}, User: openai.String(user)},
			option.WithResponseInto(&resp))
		require.NoError(t, err)
		require.Len(t, res.Choices, 1)
		return res.Choices[0].Message.Content, resp.Header.Get("X-Agnx-Session-Id")
	}
	_, alice := ask("alice", "my PIN is 4321")
	require.NotEmpty(t, alice)

	list, bob := ask("bob", `use session {"action":"list"}`)
	require.NotEqual(t, alice, bob)
	assert.True(t, strings.HasPrefix(list, "session said: "), list)
	assert.NotContains(t, list, alice, "bob does not see alice's session")
	read, _ := ask("bob", `use session {"action":"read","session_id":"`+alice+`"}`)
	assert.Contains(t, read, "another person's conversation")
	assert.NotContains(t, read, "4321")
	recall, _ := ask("bob", `use memory {"action":"recall","query":"PIN"}`)
	assert.True(t, strings.HasPrefix(recall, "memory said: "), recall)
	assert.NotContains(t, recall, "4321", "bob's recall does not search alice's conversation")

	mine, _ := ask("alice", `use memory {"action":"recall","query":"PIN"}`)
	assert.Contains(t, mine, "4321", "alice recalls her own")
}

// Every session answer of the API names the session's principal: the
// owner's for a session the API created, a digest for an OpenAI caller's
// (never the caller key); an export's session_start carries it too.
func TestSessions_ShowThePrincipal(t *testing.T) {
	e, c := oaEnv(t, llmtest.Echo())
	auth := "Authorization: Bearer " + oaToken
	var created struct {
		ID        string `json:"session_id"`
		Principal string `json:"principal"`
	}
	e.call("POST", "/api/v1/sessions", `{"agent":"assistant","gateway":"telegram","chat_id":"77"}`, http.StatusCreated, &created, auth)
	assert.Equal(t, "owner", created.Principal, "whoever holds the API token is the owner, whatever the body names")
	_, err := c.Chat.Completions.New(oaCtx(t), openai.ChatCompletionNewParams{Model: "assistant",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}, User: openai.String("alice-key-1")})
	require.NoError(t, err)

	var list struct {
		Sessions []struct {
			ID        string `json:"session_id"`
			Gateway   string `json:"gateway"`
			Principal string `json:"principal"`
		} `json:"sessions"`
	}
	e.call("GET", "/api/v1/sessions", "", http.StatusOK, &list, auth)
	require.Len(t, list.Sessions, 2)
	for _, s := range list.Sessions {
		if s.Gateway == "openai" {
			assert.Regexp(t, `^openai:[0-9a-f]{32}$`, s.Principal)
			assert.NotContains(t, s.Principal, "alice")
		} else {
			assert.Equal(t, "owner", s.Principal)
		}
	}
	var one struct {
		Principal string `json:"principal"`
	}
	e.call("GET", "/api/v1/sessions/"+created.ID, "", http.StatusOK, &one, auth)
	assert.Equal(t, "owner", one.Principal)

	resp := e.do("GET", "/api/v1/sessions/"+created.ID+"/export", "", auth)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, first, `"type":"session_start"`)
	assert.Contains(t, first, `"principal":"owner"`)
}
