package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// cli runs the CLI in-process against a data dir and a fake Ollama. Its
// config (-c) names a port nothing listens on, so that no daemon running
// on this machine is found by accident.
type cli struct {
	t    *testing.T
	dir  string
	cfg  string
	port int
	fake *llmtest.Server
}

func newCLI(t *testing.T) *cli {
	return newCLIHandler(t, llmtest.Echo())
}

func newCLIHandler(t *testing.T, h llmtest.Handler) *cli {
	fake := llmtest.NewHandler(t, llmtest.Ollama, h)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	t.Setenv("AGNX_LITE_HOME", "")
	t.Setenv(envAPIToken, "")
	t.Setenv(envAdminToken, "")
	c := &cli{t: t, dir: t.TempDir(), fake: fake, port: freePort(t)}
	c.cfg = filepath.Join(t.TempDir(), "agnx.yaml")
	require.NoError(t, os.WriteFile(c.cfg, []byte("server:\n  port: "+strconv.Itoa(c.port)+"\n"), 0o600))
	return c
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

func (c *cli) args(args []string) []string {
	return append(args[:1:1], append([]string{"-d", c.dir, "-c", c.cfg}, args[1:]...)...)
}

func (c *cli) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(c.args(args), &out, &errb)
	return code, out.String(), errb.String()
}

// runIn runs a command with stdin as its standard input.
func (c *cli) runIn(stdin io.Reader, stdout io.Writer, args ...string) (code int, stderr string) {
	var errb bytes.Buffer
	code = runWith(&globals{stdin: stdin, stdout: stdout, stderr: &errb}, c.args(args))
	return code, errb.String()
}

func TestCLI_RunFirstStart(t *testing.T) {
	c := newCLI(t)
	code, out, errs := c.run("run", "-m", "hello there")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "echo: hello there\n", out)
	assert.Contains(t, errs, "first start: wrote")
	assert.FileExists(t, filepath.Join(c.dir, "agnx.yaml"))
	assert.FileExists(t, filepath.Join(c.dir, "agents", "assistant", "agent.yaml"))

	code, out, errs = c.run("run", "-m", `use list_dir {}`)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "list_dir said: . is empty\n", out)
	assert.NotContains(t, errs, "first start")
}

func TestCLI_Sessions(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)

	code, out, _ := c.run("session", "list")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "remember the milk")
	id := strings.Fields(lines[1])[0]

	code, out, _ = c.run("session", "show", id)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "you> remember the milk")
	assert.Contains(t, out, "assistant> echo: remember the milk")

	code, out, _ = c.run("session", "export", id)
	require.Equal(t, 0, code)
	jsonl := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, jsonl, 3, "Agnx's lines: agnx-lite's turn_end is left out")
	assert.Contains(t, jsonl[0], `"type":"session_start"`)
	assert.Contains(t, jsonl[2], `"type":"assistant_response"`)

	// Continuing the session carries its history to the model.
	code, _, errs = c.run("run", "--session", id, "-m", "what did I say?")
	require.Equal(t, 0, code, errs)
	reqs := c.fake.Requests()
	assert.Equal(t, "remember the milk", reqs[len(reqs)-1].Messages[1].Content)

	code, out, errs = c.run("session", "end", id)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "ended session "+id)
	code, _, errs = c.run("run", "--session", id, "-m", "are you there?")
	assert.Equal(t, 1, code, "an ended session takes no more messages")
	assert.Contains(t, errs, "ended")

	code, out, _ = c.run("session", "delete", id)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "deleted session "+id)
	code, _, errs = c.run("session", "show", id)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "no session "+id)
}

func TestCLI_Agents(t *testing.T) {
	c := newCLI(t)
	code, out, _ := c.run("init")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "wrote")

	code, out, _ = c.run("agent", "create", "helper")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "created")
	code, out, _ = c.run("agent", "list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "assistant")
	assert.Contains(t, out, "helper")

	code, out, _ = c.run("agent", "validate")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "ok    helper")

	yaml := filepath.Join(c.dir, "agents", "helper", "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(yaml, bytes.Replace(data, []byte("provider: ollama"), []byte("provider: olama"), 1), 0o644))
	code, out, errs := c.run("agent", "validate", "helper")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `FAIL  .*helper/agent.yaml:\d+: spec.model.provider "olama" is not one of`, out)
	assert.Contains(t, errs, "1 of 1 agents are invalid")

	code, _, errs = c.run("run", "-a", "helper", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^agnx-lite: .*helper/agent.yaml:\d+: `, errs, "a bad agent file is one line with file:line")
}

func TestCLI_Errors(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "give the message with -m")

	code, _, errs = c.run("frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown command "frobnicate"`)

	code, _, errs = c.run("run", "-a", "ghost", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no agent "ghost"`)

	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	code, out, errs := c.run("run", "-m", "hi")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, 1, strings.Count(errs, "cannot reach Ollama at http://127.0.0.1:1"), errs)
	assert.Contains(t, errs, "ollama serve")

	code, out, _ = c.run("version")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "agnx-lite dev")
}

// An agent whose policy asks: chat shows the request and takes the next
// line as the answer, in-process and through the daemon alike.
func TestCLI_ChatAnswersApprovals(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "daemon"}[viaDaemon], func(t *testing.T) {
			c := newCLI(t)
			code, _, errs := c.run("init")
			require.Equal(t, 0, code, errs)
			require.NoError(t, os.WriteFile(filepath.Join(c.dir, "agents", "assistant", "policy.yaml"),
				[]byte("mode: ask\n"), 0o644))
			if viaDaemon {
				c.serve()
			}
			var out bytes.Buffer
			code, errs = c.runIn(strings.NewReader("use list_dir {}\nmaybe\no\nuse read_file {\"path\":\"x\"}\nd\n"), &out, "chat")
			require.Equal(t, 0, code, errs)
			assert.Contains(t, errs, "approval needed: list_dir")
			assert.Contains(t, errs, "answer o (allow once), a (always) or d (deny) for list_dir", "an unclear answer is asked again")
			assert.Contains(t, out.String(), "list_dir said: . is empty")
			assert.Contains(t, errs, "approval needed: read_file x")
			assert.Contains(t, out.String(), "read_file said: "+runtime.DeniedResult("x"))
		})
	}
}

// A configuration restarting cannot fix exits 78, which the systemd unit
// lists in RestartPreventExitStatus (no restart loop on a bad config).
func TestCLI_ServeBadConfigExits78(t *testing.T) {
	c := newCLI(t)
	require.NoError(t, os.WriteFile(c.cfg, []byte("server:\n  port: 0\n"), 0o600))
	code, _, errs := c.run("serve")
	assert.Equal(t, 78, code)
	assert.Contains(t, errs, "server.port 0 is out of range")

	require.NoError(t, os.WriteFile(c.cfg, []byte("server:\n  host: 0.0.0.0\n  port: "+strconv.Itoa(c.port)+"\n"), 0o600))
	code, _, errs = c.run("serve")
	assert.Equal(t, 78, code)
	assert.Contains(t, errs, "without a token")
}
