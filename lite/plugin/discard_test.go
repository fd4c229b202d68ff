package plugin_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// A chat's first message that never reached a model gets the error and
// leaves no session; the next one starts a session that is kept.
func TestGateway_NoSessionForAFailedFirstTurn(t *testing.T) {
	var calls atomic.Int32
	e := newEnvWith(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if calls.Add(1) == 1 {
			return llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`}
		}
		return llmtest.Reply{Text: "echo: " + r.LastUser()}
	})
	out := filepath.Join(t.TempDir(), "out")
	g := e.start(t, "script", plugin.RestartNever, fast, "AGNX_HELPER_OUT="+out, "AGNX_HELPER_SCRIPT=hello|again")
	waitDone(t, g)
	got := readLines(out)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "ollama pull qwen3:1.7b")
	assert.Equal(t, "echo: again", got[1])

	list, err := e.app.Loop.Sessions(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1, "the first message's session was removed")
	var users []string
	require.NoError(t, e.app.Loop.Events(t.Context(), list[0].ID, 0, func(ev runtime.Event) error {
		if ev.Type == runtime.EvUserMessage {
			users = append(users, ev.Content)
		}
		return nil
	}))
	assert.Equal(t, []string{"again"}, users)
}
