package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestExecResult_AgnxFormat(t *testing.T) {
	r := execResult(ExecResult{Output: []byte("out\n"), Stderr: []byte("err\n")}, time.Minute)
	assert.Equal(t, "out\n\n--- stderr ---\nerr\n", r.Content)
	assert.False(t, r.IsError)
	r = execResult(ExecResult{Output: []byte("out")}, time.Minute)
	assert.Equal(t, "out", r.Content, "no stderr: no separator")
	r = execResult(ExecResult{ExitCode: 4}, time.Minute)
	assert.Equal(t, "Command completed with exit code 4", r.Content)
	assert.True(t, r.IsError, "success is exit code 0")
	r = execResult(ExecResult{Output: []byte(strings.Repeat("a", 200<<10)), Stderr: []byte(strings.Repeat("b", 100<<10))}, time.Minute)
	assert.True(t, strings.HasPrefix(r.Content[MaxOutput:], "\n[... "), "cut at 256 KiB")
	assert.Contains(t, r.Content, "more bytes of output were cut")
	r = execResult(ExecResult{TimedOut: true, ExitCode: 137}, time.Second)
	assert.Equal(t, "[timed out after 1s: the command and everything it started were killed]", r.Content)
}
