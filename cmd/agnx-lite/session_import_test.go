package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session export writes Agnx's events.jsonl (and, with --dir, its session
// folder); session import reads that folder back into another data dir as
// the same conversation.
func TestCLI_SessionExportImportAgnx(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "remember the milk")
	require.Equal(t, 0, code, errs)
	id := c.sessionIDs()[0]
	code, _, errs = c.run("run", "--session", id, "-m", `use list_dir {}`)
	require.Equal(t, 0, code, errs)

	code, lines, errs := c.run("session", "export", id)
	require.Equal(t, 0, code, errs)
	var types []string
	for i, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		assert.EqualValues(t, i+1, m["seq"])
		types = append(types, m["type"].(string))
	}
	assert.Equal(t, []string{"session_start", "user_message", "assistant_response", "user_message",
		"assistant_response", "tool_result", "assistant_response"}, types)

	dir := t.TempDir()
	code, out, errs := c.run("session", "export", id, "--dir", dir)
	require.Equal(t, 0, code, errs)
	folder := filepath.Join(dir, id)
	assert.Equal(t, "exported session "+id+" to "+folder+"\n", out)
	events, err := os.ReadFile(filepath.Join(folder, "events.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, lines, string(events))
	var state struct {
		SchemaVersion string `json:"schema_version"`
		SessionID     string `json:"session_id"`
		Conversation  []any  `json:"conversation"`
	}
	data, err := os.ReadFile(filepath.Join(folder, "state.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &state))
	assert.Equal(t, "2", state.SchemaVersion)
	assert.Equal(t, id, state.SessionID)
	assert.Len(t, state.Conversation, 6)
	code, _, errs = c.run("session", "export", id, "--dir", dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "already exists: remove it or choose another --dir")

	d := newCLI(t)
	code, _, errs = d.run("init")
	require.Equal(t, 0, code, errs)
	code, out, errs = d.run("session", "import", folder)
	require.Equal(t, 0, code, errs)
	assert.Regexp(t, `^imported .* as session session_[0-9A-Z]{26} \(2 turns\)\n$`, out)
	ids := d.sessionIDs()
	require.Len(t, ids, 1)
	code, again, errs := d.run("session", "export", ids[0])
	require.Equal(t, 0, code, errs)
	assert.Equal(t, lines, again, "export, import, export: the same lines")

	// agnx-lite's own log imports too, turns as they were.
	own := filepath.Join(t.TempDir(), "own.jsonl")
	code, _, errs = c.run("session", "export", id, "--format", "lite", "-o", own)
	require.Equal(t, 0, code, errs)
	code, out, errs = d.run("session", "import", own)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(2 turns)")
	assert.Equal(t, lines, func() string {
		ids := d.sessionIDs()
		_, again, _ := d.run("session", "export", ids[len(ids)-1])
		return again
	}())

	code, out, errs = d.run("session", "import", "../../runtime/testdata/agnx/session")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "(3 turns)")
	assert.Contains(t, errs, "2 lines of ../../runtime/testdata/agnx/session could not be read and were skipped")

	code, _, errs = d.run("session", "import", t.TempDir())
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "holds neither events.jsonl nor state.json")
	code, _, _ = d.run("session", "import")
	assert.Equal(t, 2, code)
}
