package workers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func claudeRunner(t *testing.T, home string, allowed func(string) bool, args ...string) (*ClaudeRunner, *progressRec) {
	t.Helper()
	bin, err := filepath.Abs("testdata/claude_fake.sh")
	require.NoError(t, err)
	r := NewClaudeRunner(RunnerConfig{Name: "cc", Binary: bin, Args: args, Sandbox: trusted, Home: home, Allowed: allowed})
	rec := &progressRec{}
	r.progress = rec.add
	return r, rec
}

func readArgs(t *testing.T, home string) []string {
	b, err := os.ReadFile(filepath.Join(home, "args.txt"))
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestClaudeRunner_RunAndResume(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	r, rec := claudeRunner(t, home, func(tool string) bool { return tool == "bash" || tool == "read_file" })
	out, err := r.Run(t.Context(), Job{Dir: dir, Prompt: "hello"})
	require.NoError(t, err)
	assert.Equal(t, Outcome{SessionID: "0f6c1b4e-6a43-4c55-9d2e-7a1c9e0b5d21", Text: "All done: made.txt written.", Stop: "end_turn"}, out)
	assert.Contains(t, rec.all(), "Bash ls -la")
	b, err := os.ReadFile(filepath.Join(dir, "made.txt"))
	require.NoError(t, err, "claude works in the job's folder")
	assert.Equal(t, "made by claude\n", string(b))
	assert.Equal(t, []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "default",
		"--allowedTools", "Bash,BashOutput,KillShell,Read,Glob,Grep,LS,TodoWrite"}, readArgs(t, home))

	again, err := r.Run(t.Context(), Job{Dir: dir, Prompt: "again", Resume: out.SessionID})
	require.NoError(t, err)
	assert.Equal(t, "resumed "+out.SessionID, again.Text)
	assert.Equal(t, out.SessionID, again.SessionID)
	assert.Contains(t, readArgs(t, home), "--resume")

	_, err = r.Run(t.Context(), Job{Dir: dir, Prompt: "again", Resume: "gone"})
	assert.EqualError(t, err, `worker "cc" ended without a result (it said: No conversation found with session ID: gone): check its claude: entry, args and env`)
}

func TestClaudeRunner_Results(t *testing.T) {
	home := t.TempDir()
	r, _ := claudeRunner(t, home, nil)
	out, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "denied"})
	require.NoError(t, err)
	assert.Equal(t, "I could not clean up.\n[claude was refused, by the supervising agent's policy: Bash rm -rf build. "+
		"Ask the user whether to allow them, then resume this worker]", out.Text)
	assert.Equal(t, []string{"-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "default",
		"--allowedTools", "TodoWrite", "--disallowedTools", "Read,Glob,Grep,LS"}, readArgs(t, home),
		"nothing the policy does not allow unasked, not even reading")

	out, err = r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "turns"})
	require.NoError(t, err)
	assert.Equal(t, "max_turn_requests", out.Stop)

	out, err = r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "fail"})
	assert.EqualError(t, err, `worker "cc" stopped with an error (Invalid API key · Please run /login): check its claude: entry and what it says`)
	assert.Equal(t, "error", out.Stop)
	assert.NotEmpty(t, out.SessionID)

	_, err = r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "garbage"})
	assert.ErrorContains(t, err, `was stopped because it wrote "not json 64" and more lines that are not stream-json`)

	_, err = r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "silent"})
	assert.EqualError(t, err, `worker "cc" ended without a result (it said: claude: something broke): check its claude: entry, args and env`)
}

func TestClaudeRunner_JSONFormat(t *testing.T) {
	r, _ := claudeRunner(t, t.TempDir(), nil, "--output-format", "json")
	out, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "hello"})
	require.NoError(t, err)
	assert.Equal(t, "one object", out.Text)
	assert.Equal(t, "end_turn", out.Stop)
}

func TestClaudeRunner_TimeoutAndCancel(t *testing.T) {
	r, _ := claudeRunner(t, t.TempDir(), nil)
	_, err := r.Run(t.Context(), Job{Dir: t.TempDir(), Prompt: "hang", Timeout: 300 * time.Millisecond})
	assert.EqualError(t, err, "the worker did not finish within 300ms: raise timeout in its workers: entry or give it a smaller task")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r.progress = func(_ context.Context, s string) {
		if s == "Bash make slow" {
			cancel()
		}
	}
	out, err := r.Run(ctx, Job{Dir: t.TempDir(), Prompt: "hang"})
	assert.EqualError(t, err, `worker "cc" was cancelled before it finished`)
	assert.Equal(t, "cancelled", out.Stop)
	assert.Equal(t, "0f6c1b4e-6a43-4c55-9d2e-7a1c9e0b5d21", out.SessionID, "the session so far can be resumed")
}
