package agnxcompat

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// parentWorkspace is Duragent's own material, unchanged: the workspace
// `duragent init` writes and the agents of its book (see its README).
const parentWorkspace = "../../agents/testdata/agnx"

// The parent's own agents load, validate and run here unchanged: the
// daemon is started on a copy of the workspace with `serve -c
// duragent.yaml`, as a Duragent user starts theirs; the providers'
// endpoints are moved to fakes with OPENROUTER_BASE_URL and
// ANTHROPIC_BASE_URL, which touch no file. code-supervisor uses the
// anthropic provider and talks to the Messages API fake.
func TestParentAgents(t *testing.T) {
	agnxLite(t) // builds it, or skips under emulation
	ws := copyTree(t, parentWorkspace)
	fake := llmtest.NewHandler(t, llmtest.OpenAI, llmtest.Echo())
	claude := llmtest.NewHandler(t, llmtest.Anthropic, llmtest.Echo())
	env := append(cleanEnv(), "HOME="+t.TempDir(), "OPENROUTER_API_KEY=sk-agnxcompat", "OPENROUTER_BASE_URL="+fake.BaseURL(),
		"ANTHROPIC_API_KEY=sk-ant-agnxcompat", "ANTHROPIC_BASE_URL="+claude.BaseURL())

	// The init template binds 0.0.0.0 with no token, which lite refuses
	// (Duragent only warns): --host, a flag both have, keeps it local.
	d := startOnFreePort(t, env, func(port int) []string {
		return []string{"serve", "-c", filepath.Join(ws, "duragent.yaml"), "--host", "127.0.0.1", "-p", strconv.Itoa(port)}
	})
	c := newAPIClient(d.base, "")

	list, err := c.listAgents()
	require.NoError(t, err)
	var names []string
	for _, a := range list {
		names = append(names, *a.Name)
	}
	assert.ElementsMatch(t, []string{"code-reviewer", "code-supervisor", "my-assistant", "productivity-assistant"}, names,
		"every parent agent is listed")

	for _, name := range []string{"my-assistant", "productivity-assistant", "code-reviewer", "code-supervisor"} {
		t.Run(name, func(t *testing.T) {
			s, r, err := c.createSession(name)
			require.NoError(t, err, "%s", r)
			r, err = c.postMessage(*s.SessionID, "hello from "+name)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, r.Status, "%s", r)
			var ans struct{ Content string }
			require.NoError(t, json.Unmarshal(r.Body, &ans))
			assert.Equal(t, "echo: hello from "+name, ans.Content)
		})
	}

	// What the model was told is the agent as its files say: the soul and
	// the skill of productivity-assistant.
	var system string
	for _, req := range fake.Requests() {
		if len(req.Messages) > 1 && strings.Contains(req.Messages[len(req.Messages)-1].Content, "hello from productivity-assistant") {
			system = req.Messages[0].Content
		}
	}
	assert.Contains(t, system, "Be concise and concrete; prefer bullet points over paragraphs")
	assert.Contains(t, system, "<available_skills>\n  <skill>\n    <name>task-extraction</name>")

	// code-supervisor went to the Messages API with its key, its model,
	// its system prompt as a cached block and its tools.
	reqs := claude.Requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, "sk-ant-agnxcompat", got.Header.Get("x-api-key"))
	assert.Equal(t, "claude-sonnet-4-20250514", got.Model)
	require.NotNil(t, got.Anthropic)
	require.NotEmpty(t, got.Anthropic.System)
	assert.NotNil(t, got.Anthropic.System[len(got.Anthropic.System)-1].CacheControl)
	assert.Contains(t, got.ToolNames(), "bash")

	t.Run("validate", func(t *testing.T) {
		cmd := exec.Command(agnxLite(t), "agent", "validate", "-c", filepath.Join(ws, "duragent.yaml"))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		text := string(out)
		require.NoError(t, err, "%s", text)
		for _, ok := range []string{"ok    code-reviewer", "ok    code-supervisor", "ok    my-assistant", "ok    productivity-assistant"} {
			assert.Contains(t, text, ok)
		}
		assert.Contains(t, text, `spec.instructions names ./INSTRUCTIONS.md, which does not exist`, "a missing prompt file is a warning, as in Duragent")
		assert.Contains(t, text, `cli tool "git-diff": `, "a cli tool whose program is missing is left out with a warning")
		assert.NotContains(t, text, "which this build does not have", "every Agnx built-in exists (schedule, background_process)")
	})
}

// startOnFreePort starts the daemon with the args for a free loopback
// port. The port is free when it is chosen, but another test process may
// bind it before the daemon does (the packages' tests run at once, and a
// config cannot ask for port 0), so a daemon that exits because the
// address is in use is started again on another port, up to five times.
func startOnFreePort(t *testing.T, env []string, args func(port int) []string) *daemon {
	t.Helper()
	for try := 1; ; try++ {
		port := freePort(t)
		d := launch(t, "http://127.0.0.1:"+strconv.Itoa(port), env, args(port))
		err := d.waitReady()
		if err == nil {
			return d
		}
		if try == 5 || !strings.Contains(d.log.String(), "address already in use") {
			t.Fatal(err)
		}
		d.discard = true // its log is of no use: the next one's is
	}
}

// launch starts the binary with args and stops it when the test ends,
// printing its log if the test failed.
func launch(t *testing.T, base string, env []string, args []string) *daemon {
	t.Helper()
	d := &daemon{base: base, exited: make(chan struct{}), log: &lockedBuffer{}}
	d.cmd = exec.Command(agnxLite(t), args...)
	d.cmd.Env = env
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	require.NoError(t, d.cmd.Start())
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		d.stop()
		if t.Failed() && !d.discard {
			log := d.log.String()
			if len(log) > 6000 {
				log = "…" + log[len(log)-6000:]
			}
			t.Logf("daemon log (%s):\n%s", strings.Join(args, " "), log)
		}
	})
	return d
}

// copyTree copies the folder src (files and folders, modes kept) into a
// new temporary folder and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := e.Info()
		if err != nil {
			return err
		}
		if e.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	require.NoError(t, err)
	return dst
}
