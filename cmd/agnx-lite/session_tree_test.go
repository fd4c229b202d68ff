package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestSessionTree(t *testing.T) {
	s := func(id, parent string) runtime.SessionInfo { return runtime.SessionInfo{ID: id, Parent: parent} }
	// Most recent first, as ListSessions gives them.
	list := []runtime.SessionInfo{s("c2", "p"), s("g1", "c1"), s("p", ""), s("lost", "deleted"),
		s("c1", "p"), s("q", ""), s("x", "y"), s("y", "x")}
	var got []string
	for _, r := range sessionTree(list) {
		got = append(got, strings.Repeat(".", r.depth)+r.ID+"<"+r.orphanOf)
	}
	assert.Equal(t, []string{
		"p<", ".c2<", ".c1<", "..g1<", // children under their parent, each level in the list's order
		"lost<deleted", // its parent is not listed: top level, saying whose child it is
		"q<",
		"x<y", ".y<", // a parent loop still shows every session once
	}, got)
}

var tableRow = regexp.MustCompile(`(?m)^(\S*(?: *└─ )?)(session_\S+) `)

// session list shows a subagent's session under its parent; --json keeps
// the flat list, with parent_id.
func TestCLI_SessionListTree(t *testing.T) {
	c := newCLI(t)
	code, _, errs := c.run("run", "-m", "the parent")
	require.Equal(t, 0, code, errs)
	parent := c.sessionIDs()[0]

	// Subagent sessions as the agent tool leaves them: session_start with
	// a spawn link (one to a parent since deleted).
	cfg, err := config.Locate(c.cfg, c.dir)
	require.NoError(t, err)
	app, err := lite.Open(cfg, &lite.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	at := time.Now().Add(-time.Hour)
	for i, p := range []string{parent, "session_gone"} {
		_, err := app.Loop.ImportSession(context.Background(), []runtime.Event{
			{Type: runtime.EvSessionStart, Agent: "assistant", Time: at,
				Spawn: &runtime.Spawn{Parent: p, Call: "call_1", Depth: 1, Ceiling: []string{"assistant"}}},
			{Type: runtime.EvUserMessage, Content: "child " + string(rune('a'+i)), Time: at},
		})
		require.NoError(t, err)
	}
	require.NoError(t, app.Close())

	code, out, errs := c.run("session", "list")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	require.Len(t, lines, 3, out)
	var rows []string
	for _, l := range lines {
		m := tableRow.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		rows = append(rows, m[1])
	}
	i := indexOf(lines, parent)
	require.GreaterOrEqual(t, i, 0, out)
	require.Less(t, i+1, len(lines), out)
	assert.Equal(t, "└─ ", rows[i+1], "the child is right under its parent:\n%s", out)
	assert.Contains(t, lines[i+1], "child a")
	orphan := indexOf(lines, "child b")
	assert.Equal(t, "", rows[orphan], "a child whose parent is gone is at the top level")
	assert.Contains(t, lines[orphan], "(child of session_gone) child b")

	code, out, errs = c.run("session", "list", "--json")
	require.Equal(t, 0, code, errs)
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list.Sessions, 3)
	parents := map[string]any{}
	for _, s := range list.Sessions {
		assert.Contains(t, s, "agent")
		parents[s["preview"].(string)] = s["parent_id"]
	}
	assert.Equal(t, map[string]any{"the parent": nil, "child a": parent, "child b": "session_gone"}, parents)
}

func indexOf(lines []string, s string) int {
	for i, l := range lines {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}
