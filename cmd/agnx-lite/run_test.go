package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// askingCLI is a CLI whose agent's policy asks before every call, used
// in-process or through a daemon.
func askingCLI(t *testing.T, h llmtest.Handler, viaDaemon bool) *cli {
	c := newCLIHandler(t, h)
	code, _, errs := c.run("init")
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.WriteFile(filepath.Join(c.dir, "agents", "assistant", "policy.yaml"), []byte("mode: ask\n"), 0o644))
	if viaDaemon {
		c.serve()
	}
	return c
}

// runNoTerminal runs the CLI with standard input that is not a terminal.
func (c *cli) runNoTerminal(args ...string) (code int, stdout, stderr string) {
	var out bytes.Buffer
	code, stderr = c.runIn(strings.NewReader(""), &out, args...)
	return code, out.String(), stderr
}

// Without a terminal, run cannot ask: it denies at once (the user's
// decision, not the approval timeout) and says how to allow such calls;
// --approve allows them for that run only. Both backends do the same.
func TestCLI_RunApprovalsWithoutTerminal(t *testing.T) {
	outputs := map[bool]string{}
	for _, viaDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "daemon"}[viaDaemon], func(t *testing.T) {
			c := askingCLI(t, llmtest.Echo(), viaDaemon)
			var all strings.Builder

			code, out, errs := c.runNoTerminal("run", "-m", "use list_dir {}")
			require.Equal(t, 0, code, errs)
			assert.Equal(t, "list_dir said: "+runtime.DeniedResult(".")+"\n", out)
			assert.Contains(t, errs, "approval needed: list_dir .\n", "no prompt to answer")
			assert.Contains(t, errs, deniedNotice+"\n")
			assert.Contains(t, errs, "↳ deny (user)", "denied at once, not by the timeout")
			all.WriteString(out + errs)

			code, out, errs = c.runNoTerminal("run", "--approve", "-m", "use list_dir {}")
			require.Equal(t, 0, code, errs)
			assert.Equal(t, "list_dir said: . is empty\n", out)
			assert.Contains(t, errs, "↳ allow once (user)")
			assert.NotContains(t, errs, "denied")
			all.WriteString(out + errs)

			code, out, errs = c.runNoTerminal("run", "-m", "use list_dir {}")
			require.Equal(t, 0, code, errs)
			assert.Equal(t, "list_dir said: "+runtime.DeniedResult(".")+"\n", out, "--approve held for its run only")
			all.WriteString(out + errs)
			outputs[viaDaemon] = regexp.MustCompile(`\bsession_[0-9A-Z]{26}\b`).ReplaceAllString(all.String(), "ID")
		})
	}
	assert.Equal(t, outputs[false], outputs[true])
}

// A turn that used its max_tool_iterations shows its answer, then a note
// saying how to allow more rounds; run still succeeds.
func TestCLI_RunToolLimitNote(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "daemon"}[viaDaemon], func(t *testing.T) {
			c := newCLIHandler(t, func(r llmtest.RecordedRequest) llmtest.Reply {
				if len(r.Tools) == 0 {
					return llmtest.Reply{Text: "the folder is empty"}
				}
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "list_dir", Arguments: `{}`}}}
			})
			code, _, errs := c.run("init")
			require.Equal(t, 0, code, errs)
			spec := filepath.Join(c.dir, "agents", "assistant", "agent.yaml")
			data, err := os.ReadFile(spec)
			require.NoError(t, err)
			data = bytes.Replace(data, []byte("max_tool_iterations: 10"), []byte("max_tool_iterations: 2"), 1)
			require.NoError(t, os.WriteFile(spec, data, 0o644))
			if viaDaemon {
				c.serve()
			}
			code, out, errs := c.runNoTerminal("run", "-m", "what is in there?")
			require.Equal(t, 0, code, errs)
			assert.Equal(t, "the folder is empty\n", out)
			assert.Contains(t, errs, "note: this turn stopped using tools after 2 rounds")
			assert.Contains(t, errs, "raise spec.session.max_tool_iterations")

			id := c.sessionIDs()[0]
			code, out, _ = c.run("session", "show", id)
			require.Equal(t, 0, code)
			assert.Contains(t, out, "assistant> the folder is empty\n  note: this turn stopped using tools after 2 rounds")
		})
	}
}
