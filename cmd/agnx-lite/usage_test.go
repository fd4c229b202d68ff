package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

func TestCLI_Usage(t *testing.T) {
	c := newCLIHandler(t, func(llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "fine", Usage: llmtest.Usage{Prompt: 1000, Completion: 50}}
	})
	code, out, _ := c.run("usage")
	require.Equal(t, 0, code)
	assert.Equal(t, "no model calls recorded\n", out)

	for range 2 {
		code, _, errs := c.run("run", "-m", "hello")
		require.Equal(t, 0, code, errs)
	}
	code, out, errs := c.run("usage", "--by", "agent", "--since", "24h")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.Regexp(t, `AGENT\s+CALLS\s+INPUT\s+OUTPUT\s+TOTAL\s*$`, lines[0])
	assert.Regexp(t, `assistant\s+2\s+2000\s+100\s+2100\s*$`, lines[1])
	assert.Regexp(t, `total\s+2\s+2000\s+100\s+2100\s*$`, lines[2])
	assert.NotContains(t, out, "COST", "no prices: no cost column")

	// With a price the cost column appears: 2000 × $3 + 100 × $15 per million.
	cfg, err := os.ReadFile(c.cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(c.cfg, append(cfg, []byte("prices:\n  qwen3:1.7b: {input: 3, output: 15}\n")...), 0o600))
	code, out, errs = c.run("usage", "--by", "model")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `MODEL\s+CALLS\s+INPUT\s+OUTPUT\s+TOTAL\s+COST USD\s*\n`, out)
	assert.Regexp(t, `qwen3:1.7b\s+2\s+2000\s+100\s+2100\s+0\.0075\s*\n`, out)

	code, out, errs = c.run("usage", "--json", "--by", "day")
	require.Equal(t, 0, code, errs)
	var rep runtime.UsageReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Rows, 1)
	assert.Regexp(t, `^\d{4}-\d\d-\d\d$`, rep.Rows[0].Key)
	assert.EqualValues(t, 2100, rep.Total.Total)

	// The same through a running daemon, which holds the database.
	c.serve()
	code, _, errs = c.run("run", "-m", "once more")
	require.Equal(t, 0, code, errs)
	code, out, errs = c.run("usage", "--agent", "assistant", "--since", "today")
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `total\s+3\s+3000\s+150\s+3150\s+0\.0112\s*\n`, out)
	code, out, _ = c.run("usage", "--agent", "nobody")
	require.Equal(t, 0, code)
	assert.Equal(t, "no model calls recorded for nobody\n", out)
}

func TestCLI_UsageErrors(t *testing.T) {
	c := newCLI(t)
	for args, want := range map[string]string{
		"usage --by week":         `--by "week": use agent, model or day`,
		"usage --since yesterday": `--since "yesterday" is not a time: use a span back from now such as 7d or 24h`,
		"usage --agent a/b":       `--agent "a/b" is not an agent name`,
		"usage extra":             "usage takes no words",
	} {
		code, _, errs := c.run(strings.Fields(args)...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errs, want, args)
	}
}
