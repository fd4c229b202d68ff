package main

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// modelMissing answers as Ollama does for a model it does not have, until
// pulled is set.
func modelMissing(pulled *atomic.Bool) llmtest.Handler {
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if pulled.Load() {
			return llmtest.Reply{Text: "echo: " + r.LastUser()}
		}
		return llmtest.Reply{Status: 404, ErrorMessage: `model "qwen3:1.7b" not found, try pulling it first`}
	}
}

// sessionCount is how many sessions "session list" shows.
func (c *cli) sessionCount() int {
	c.t.Helper()
	code, out, errs := c.run("session", "list")
	require.Equal(c.t, 0, code, errs)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// TestCLI_NoSessionForAFailedFirstTurn: a turn that never reached a model
// leaves no session behind, in-process and through the daemon; the user is
// told why, and the next message starts afresh once the model is there.
func TestCLI_NoSessionForAFailedFirstTurn(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		name := map[bool]string{false: "in-process", true: "daemon"}[viaDaemon]
		t.Run(name, func(t *testing.T) {
			var pulled atomic.Bool
			c := newCLIHandler(t, modelMissing(&pulled))
			code, _, _ := c.run("init")
			require.Equal(t, 0, code)
			if viaDaemon {
				c.serve()
			}
			code, _, errs := c.run("run", "-m", "hello")
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "ollama pull qwen3:1.7b", "one sentence with what to do")
			assert.Zero(t, c.sessionCount(), "run left no session")

			var out bytes.Buffer
			code, errs = c.runIn(strings.NewReader("hi\n"), &out, "chat")
			require.Equal(t, 0, code, errs)
			assert.Contains(t, errs, "ollama pull qwen3:1.7b")
			assert.Contains(t, out.String(), "nothing was kept")
			assert.Zero(t, c.sessionCount(), "chat left no session")

			// Leaving a chat without a word keeps nothing either.
			out.Reset()
			code, errs = c.runIn(strings.NewReader(""), &out, "chat")
			require.Equal(t, 0, code, errs)
			assert.Zero(t, c.sessionCount())

			// A failed first message, then the model is pulled: the
			// next message starts a session of its own and is kept.
			out.Reset()
			pr, pw := io.Pipe()
			done := make(chan int, 1)
			errb := newSyncBuffer()
			ob := newSyncBuffer()
			go func() { done <- runWith(&globals{stdin: pr, stdout: ob, stderr: errb}, c.args([]string{"chat"})) }()
			_, _ = pw.Write([]byte("first\n"))
			ob.waitFor(t, "nothing was kept")
			pulled.Store(true)
			_, _ = pw.Write([]byte("second\n"))
			ob.waitFor(t, "echo: second")
			require.NoError(t, pw.Close())
			require.Equal(t, 0, <-done, errb.String())
			assert.Contains(t, ob.String(), "new session ")
			assert.Equal(t, 1, c.sessionCount())
			code, out2, _ := c.run("session", "list")
			require.Equal(t, 0, code)
			assert.Contains(t, out2, "second")
			assert.NotContains(t, out2, "first")

			// A session named with --session is the user's: kept.
			pulled.Store(false)
			id := strings.Fields(strings.Split(strings.TrimSpace(out2), "\n")[1])[0]
			code, _, _ = c.run("run", "--session", id, "-m", "third")
			assert.Equal(t, 1, code)
			assert.Equal(t, 1, c.sessionCount())
		})
	}
}
