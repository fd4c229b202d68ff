package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// docs/security.md states the deadline of commands: it must be the code's.
// (It said 60 s, bwrap's own default, which bash and CLI tools never use.)
func TestBash_DeadlinesAsTheThreatModelStates(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	require.NoError(t, err)
	doc := strings.Join(strings.Fields(string(data)), " ")
	for _, want := range []string{
		fmt.Sprintf("A deadline that kills the whole pid namespace: %d s by default for `bash` and CLI tools", int(DefaultTimeout.Seconds())),
		fmt.Sprintf("the model may ask a `bash` call for more, up to %d s, or up to the entry's `timeout_seconds`", int(MaxBashTimeout.Seconds())),
	} {
		assert.True(t, strings.Contains(doc, want), "docs/security.md does not say: %s", want)
	}
	b := &Bash{}
	assert.Equal(t, DefaultTimeout, b.timeout(bashArgs{}))
	assert.Equal(t, MaxBashTimeout, b.timeout(bashArgs{TimeoutSeconds: 3600}))
	b.MaxTimeout = 30 * time.Second
	assert.Equal(t, 30*time.Second, b.timeout(bashArgs{}), "the entry's timeout_seconds caps the default too")
}
