package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// sessionIDs returns the ids of `session list`.
func (c *cli) sessionIDs() []string {
	code, out, errs := c.run("session", "list")
	require.Equal(c.t, 0, code, errs)
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		ids = append(ids, strings.Fields(l)[0])
	}
	return ids
}

func TestCLI_AgentExportImport(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	orig := c.sessionIDs()
	require.Len(t, orig, 1)
	code, _, errs = c.run("run", "--session", orig[0], "-m", `use list_dir {}`)
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.MkdirAll(filepath.Join(c.dir, "agents", "assistant", "tools", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(c.dir, "agents", "assistant", "tools", "x", "run"), []byte("#!/bin/sh\n"), 0o755))

	file := filepath.Join(t.TempDir(), "assistant.tar.gz")
	code, out, errs := c.run("agent", "export", "assistant", "--with-sessions", "-o", file)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "exported agent assistant with 1 sessions to "+file+"\n", out)

	var stdout bytes.Buffer
	code, errs = c.runIn(nil, &stdout, "agent", "export", "assistant")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, []byte{0x1f, 0x8b}, stdout.Bytes()[:2], "a gzip stream on standard output")

	// Into another data dir: the agent and its session, with a new id.
	d := newCLI(t)
	code, out, errs = d.run("agent", "import", file)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "imported agent assistant in "+filepath.Join(d.dir, "agents", "assistant"))
	assert.Regexp(t, `imported session `+orig[0]+` as session_[0-9A-Z]{26} \(2 turns\)`, out)
	assert.Equal(t, "unpacking assistant.tar.gz\nimporting session 1 of 1\n", errs, "not a terminal: a line per step")
	run, err := os.ReadFile(filepath.Join(d.dir, "agents", "assistant", "tools", "x", "run"))
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\n", string(run))
	ids := d.sessionIDs()
	require.Len(t, ids, 1)
	assert.NotEqual(t, orig[0], ids[0])
	assert.Equal(t, exportEvents(t, c, orig[0]), exportEvents(t, d, ids[0]), "the same events, numbered alike")

	// The imported session goes on.
	code, out, errs = d.run("run", "--session", ids[0], "-m", "and now?")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "echo: and now?\n", out)

	code, _, errs = d.run("agent", "import", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `agent "assistant" already exists`)
	assert.Contains(t, errs, "--force")

	code, errs = d.runIn(strings.NewReader(""), &bytes.Buffer{}, "agent", "import", "--force", "-")
	assert.Equal(t, 1, code, "no archive on standard input")
	assert.Contains(t, errs, "not a gzip'd tar archive")
	code, errs = d.runIn(bytes.NewReader(stdout.Bytes()), &bytes.Buffer{}, "agent", "import", "--force", "-")
	require.Equal(t, 0, code, errs)
	assert.Len(t, d.sessionIDs(), 1, "an archive without sessions adds none")
}

// exportEvents returns a session's own log (session export --format
// lite) as events.
func exportEvents(t *testing.T, c *cli, id string) []runtime.Event {
	code, out, errs := c.run("session", "export", id, "--format", "lite")
	require.Equal(t, 0, code, errs)
	var p fastjson.Parser
	evs, err := readEvents(&p, strings.NewReader(out))
	require.NoError(t, err)
	return evs
}

func TestCLI_AgentExportImportErrors(t *testing.T) {
	c := newCLI(t)
	code, _, _ := c.run("init")
	require.Equal(t, 0, code)

	code, _, errs := c.run("agent", "export", "ghost")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, `no agent "ghost"`)

	code, _, errs = c.run("agent", "export")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "export needs one agent name")

	bad := filepath.Join(t.TempDir(), "bad.tar.gz")
	require.NoError(t, os.WriteFile(bad, []byte("nope"), 0o644))
	code, _, errs = c.run("agent", "import", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "not a gzip'd tar archive")

	// No database yet: --with-sessions exports the agent alone.
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	code, out, errs := c.run("agent", "export", "assistant", "--with-sessions", "-o", file)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "with 0 sessions")
}

// Through a running daemon: export reads the sessions over HTTP; import
// brings the agent in but leaves the sessions, saying so.
func TestCLI_AgentExportImportDaemon(t *testing.T) {
	c := newCLI(t)
	c.serve()
	code, _, errs := c.run("run", "-m", "hello")
	require.Equal(t, 0, code, errs)
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	code, out, errs := c.run("agent", "export", "assistant", "--with-sessions", "-o", file)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "with 1 sessions")

	code, out, errs = c.run("agent", "import", "--force", file)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "replaced agent assistant")
	assert.Contains(t, errs, "sessions are imported only while the daemon is stopped")
	assert.Len(t, c.sessionIDs(), 1)
}
