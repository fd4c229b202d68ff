package agnxcompat

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// The prompt files of the helper agent, as GET /api/v1/agents/{name} must
// return them (§6: prompt texts).
const (
	helperSystemPrompt = "You are the contract helper."
	helperInstructions = "Answer briefly."
)

// parentAgent is an agent.yaml in the parent's format with the bash
// builtin, on an OpenAI-compatible fake, under policy mode.
func parentAgent(name, description, llmBase, mode string) agentDef {
	yaml := fmt.Sprintf(`apiVersion: duragent/v1alpha1
kind: Agent
metadata:
  name: %s
  description: %s
  version: "1.2"
  labels:
    team: compat
spec:
  model:
    provider: openai
    name: gpt-compat
    temperature: 0.5
    base_url: %s
  system_prompt: ./SYSTEM_PROMPT.md
  instructions: ./INSTRUCTIONS.md
  tools:
    - type: builtin
      name: bash
`, name, description, llmBase)
	return agentDef{folder: name, files: map[string]string{
		"agent.yaml":       yaml,
		"SYSTEM_PROMPT.md": helperSystemPrompt + "\n",
		"INSTRUCTIONS.md":  helperInstructions + "\n",
		"policy.yaml":      "mode: " + mode + "\n",
	}}
}

// fakes are the LLMs of a contract daemon: an Echo model (see llmtest.Echo:
// "use bash {…}" calls bash, a tool result comes back as "bash said: …")
// and one that answers every call 400.
type fakes struct {
	echo   *llmtest.Server
	broken *llmtest.Server
}

func newFakes(t *testing.T) fakes {
	return fakes{
		echo: llmtest.NewHandler(t, llmtest.OpenAI, llmtest.Echo()),
		broken: llmtest.NewHandler(t, llmtest.OpenAI, func(llmtest.RecordedRequest) llmtest.Reply {
			return llmtest.Reply{Status: 400, ErrorMessage: "model gpt-compat does not exist"}
		}),
	}
}

// workspaceHash is sha256 hex of the canonical workspace path (§6 readyz).
func workspaceHash(t *testing.T, ws string) string {
	canon, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	abs, err := filepath.Abs(canon)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:])
}

// assertProblem checks an error response against §8: the status, an
// application/problem+json body with the parent's type and title.
func assertProblem(t *testing.T, r httpResult, status int, typ, title, row string) {
	t.Helper()
	require.Equal(t, status, r.Status, "%s: want %d; got %s", row, status, r)
	assert.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json"),
		"§8 %s: errors are application/problem+json; got %s", row, r)
	var p problem
	if assert.NoError(t, decodeStrict(r.Body, &p), "§8 %s: problem body {type, title, status, detail?}: %s", row, r) {
		assert.Equal(t, typ, *p.Type, "§8 %s: problem type", row)
		assert.Equal(t, title, *p.Title, "§8 %s: problem title", row)
		assert.Equal(t, status, *p.Status, "§8 %s: problem status", row)
	}
}

const (
	problemBadRequest = "urn:duragent:problem:bad-request"
	problemNotFound   = "urn:duragent:problem:not-found"
	problemInternal   = "urn:duragent:problem:internal-error"
)

// assertCleanStream checks a stream read to its end against §7: it parsed
// with the parent's rules, no chunk was dropped, start came first, then
// tokens only, then exactly one of done/error/cancelled, then the end.
func assertCleanStream(t *testing.T, r streamResult, row string) {
	t.Helper()
	require.NoError(t, r.Err, "§7 %s: the parent's client fails on this stream; chunks: %q", row, r.Chunks)
	require.Zero(t, r.Dropped, "§7 %s: the parent drops a chunk that is not valid UTF-8 alone (write whole events per flush); chunks: %q", row, r.Chunks)
	require.NotEmpty(t, r.Events, "§7 %s: no events", row)
	assert.Equal(t, "start", r.Events[0].Kind, "§7 %s: start comes first; events %v", row, kinds(r.Events))
	last := len(r.Events) - 1
	assert.Contains(t, []string{"done", "error", "cancelled"}, r.Events[last].Kind, "§7 %s: the stream ends with done, error or cancelled; events %v", row, kinds(r.Events))
	for _, e := range r.Events[1:last] {
		assert.Equal(t, "token", e.Kind, "§7 %s: only tokens between start and the end; events %v", row, kinds(r.Events))
	}
}

// tokens joins the token events' content.
func tokens(evs []clientEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == "token" {
			b.WriteString(e.Content)
		}
	}
	return b.String()
}

// assertRFC3339 checks a §6 time.
func assertRFC3339(t *testing.T, s, what string) {
	t.Helper()
	_, err := time.Parse(time.RFC3339, s)
	assert.NoError(t, err, "§6: %s is RFC 3339", what)
}
