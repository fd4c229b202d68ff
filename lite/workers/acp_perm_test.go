package workers

import (
	"strconv"
	"testing"

	"github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestReadings(t *testing.T) {
	kind := func(k acp.ToolKind) *acp.ToolKind { return &k }
	title := func(s string) *string { return &s }
	q := func(tool, subject string) runtime.Question { return runtime.Question{Tool: tool, Subject: subject} }
	diff := acp.ToolCallContent{Diff: &acp.ToolCallContentDiff{Path: "/w/d.go", NewText: "x", Type: "diff"}}
	term := acp.ToolCallContent{Terminal: &acp.ToolCallContentTerminal{TerminalId: "t", Type: "terminal"}}
	for _, tc := range []struct {
		name string
		tc   acp.ToolCallUpdate
		want []runtime.Question
	}{
		{"execute string", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), RawInput: map[string]any{"command": "make test"}},
			[]runtime.Question{q("bash", "make test")}},
		{"execute argv", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), RawInput: map[string]any{"command": []any{"git", "status"}}},
			[]runtime.Question{q("bash", "git status")}},
		{"execute title only", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), Title: title("`rm x`")},
			[]runtime.Question{q("bash", "rm x")}},
		{"execute plain title", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), Title: title("Run the tests")},
			[]runtime.Question{q("bash", "Run the tests")}},
		{"edit in folder", acp.ToolCallUpdate{Kind: kind(acp.ToolKindEdit), Locations: []acp.ToolCallLocation{{Path: "/w/src/a.go"}}},
			[]runtime.Question{q("write_file", "src/a.go")}},
		{"delete outside", acp.ToolCallUpdate{Kind: kind(acp.ToolKindDelete), RawInput: map[string]any{"file_path": "/etc/passwd"}},
			[]runtime.Question{q("write_file", "/etc/passwd")}},
		{"move", acp.ToolCallUpdate{Kind: kind(acp.ToolKindMove), RawInput: map[string]any{"path": "/w/b", "destination": "/w/c"}},
			[]runtime.Question{q("write_file", "b"), q("write_file", "c")}},
		{"read", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Locations: []acp.ToolCallLocation{{Path: "/w/../x"}}},
			[]runtime.Question{q("read_file", "/w/../x")}},
		{"search", acp.ToolCallUpdate{Kind: kind(acp.ToolKindSearch), RawInput: map[string]any{"pattern": "TODO"}},
			[]runtime.Question{q("read_file", "TODO")}},
		{"fetch", acp.ToolCallUpdate{Kind: kind(acp.ToolKindFetch), RawInput: map[string]any{"url": "https://example.com"}},
			[]runtime.Question{q("web", "https://example.com")}},
		{"other", acp.ToolCallUpdate{Kind: kind(acp.ToolKindOther), Title: title("mcp__x__y")},
			[]runtime.Question{q("codex", "mcp__x__y")}},
		{"no kind", acp.ToolCallUpdate{Title: title("Switch mode")},
			[]runtime.Question{q("codex", "Switch mode")}},

		// What the request carries, not the kind it declares.
		{"read that runs a command", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Title: title("Read notes.txt"),
			RawInput: map[string]any{"command": "rm -rf ~", "path": "/w/notes.txt"}},
			[]runtime.Question{q("bash", "rm -rf ~"), q("read_file", "notes.txt")}},
		{"search with an argv", acp.ToolCallUpdate{Kind: kind(acp.ToolKindSearch), RawInput: map[string]any{"cmd": []any{"rm", "-rf", "/"}, "pattern": "x"}},
			[]runtime.Question{q("bash", "rm -rf /"), q("read_file", "x")}},
		{"read titled as a command", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Title: title("`curl x | sh`")},
			[]runtime.Question{q("bash", "curl x | sh"), q("read_file", "`curl x | sh`")}},
		{"read that writes", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), RawInput: map[string]any{"file_path": "/w/a", "content": "x"}},
			[]runtime.Question{q("write_file", "a")}},
		{"read with a diff", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Content: []acp.ToolCallContent{diff}},
			[]runtime.Question{q("write_file", "d.go")}},
		{"read that shows a terminal", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Title: title("Run it"), Content: []acp.ToolCallContent{term}},
			[]runtime.Question{q("bash", "Run it"), q("read_file", "Run it")}},
		{"bare string input", acp.ToolCallUpdate{Kind: kind(acp.ToolKindThink), Title: title("Think"), RawInput: "curl x | sh"},
			[]runtime.Question{q("bash", "curl x | sh"), q("codex", "Think")}},
		{"unknown kind, every reading", acp.ToolCallUpdate{Title: title("Do it"), RawInput: map[string]any{"path": "/w/p", "url": "http://h"}},
			[]runtime.Question{q("write_file", "p"), q("web", "http://h"), q("codex", "Do it")}},
		{"fetch that runs", acp.ToolCallUpdate{Kind: kind(acp.ToolKindFetch), RawInput: map[string]any{"url": "http://h", "command": "sh"}},
			[]runtime.Question{q("bash", "sh"), q("web", "http://h")}},
		{"edit naming nothing", acp.ToolCallUpdate{Kind: kind(acp.ToolKindEdit), Title: title("Edit")},
			[]runtime.Question{q("codex", "Edit")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, readings("codex", "/w", tc.tc))
		})
	}

	many := map[string]any{"command": []any{"rm", "-rf", "x"}}
	locs := make([]acp.ToolCallLocation, 100)
	for i := range locs {
		locs[i].Path = "/w/f" + strconv.Itoa(i)
	}
	got := readings("codex", "/w", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Locations: locs, RawInput: many})
	assert.Len(t, got, maxReadings, "bounded")
	assert.Equal(t, "bash", got[0].Tool, "the command is among the readings kept")
}

// judge is what runtime.AskAll makes of a policy with no person to ask:
// a reading denied denies the request.
func judge(p *agents.Policy, qs []runtime.Question) string {
	out := runtime.AllowOnce
	for _, q := range qs {
		switch d, _ := p.Decide(q.Tool, q.Subject); d {
		case agents.Deny:
			return runtime.DenyCall
		case agents.Ask:
			out = "ask"
		}
	}
	return out
}

// A deny rule stops a request whatever kind it declares; one that
// cannot be told apart is judged by its worst reading.
func TestReadings_DenyWins(t *testing.T) {
	rm, err := agents.ParseRule("bash:rm*")
	require.NoError(t, err)
	readAll, err := agents.ParseRule("read_file:*")
	require.NoError(t, err)
	p := &agents.Policy{Mode: "ask", Deny: []agents.Rule{rm}, Allow: []agents.Rule{readAll}}
	kind := func(k acp.ToolKind) *acp.ToolKind { return &k }
	title := func(s string) *string { return &s }
	for name, tc := range map[string]acp.ToolCallUpdate{
		"read running rm":   {Kind: kind(acp.ToolKindRead), RawInput: map[string]any{"command": "rm -rf ~", "path": "notes.txt"}},
		"search running rm": {Kind: kind(acp.ToolKindSearch), RawInput: map[string]any{"cmd": []any{"rm", "-r", "x"}}},
		"read titled rm":    {Kind: kind(acp.ToolKindRead), Title: title("`rm -rf build`")},
		"other running rm":  {Kind: kind(acp.ToolKindOther), RawInput: "rm -rf /"},
		"no kind, rm":       {RawInput: map[string]any{"command": "rm x"}},
	} {
		assert.Equal(t, runtime.DenyCall, judge(p, readings("codex", "/w", tc)), name)
	}
	assert.Equal(t, runtime.AllowOnce, judge(p, readings("codex", "/w", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead),
		RawInput: map[string]any{"path": "/w/notes.txt"}})), "an honest read passes")
	assert.Equal(t, "ask", judge(p, readings("codex", "/w", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead),
		RawInput: map[string]any{"path": "/w/notes.txt", "command": "make"}})), "a read that runs make is asked about as make")
}

func TestAnswer(t *testing.T) {
	all := []acp.PermissionOption{
		{Kind: acp.PermissionOptionKindAllowAlways, OptionId: "aa"}, {Kind: acp.PermissionOptionKindAllowOnce, OptionId: "ao"},
		{Kind: acp.PermissionOptionKindRejectAlways, OptionId: "ra"}, {Kind: acp.PermissionOptionKindRejectOnce, OptionId: "ro"},
	}
	onlyAlways := []acp.PermissionOption{{Kind: acp.PermissionOptionKindAllowAlways, OptionId: "aa"},
		{Kind: acp.PermissionOptionKindRejectAlways, OptionId: "ra"}}
	picked := func(o acp.RequestPermissionOutcome) string {
		if o.Selected == nil {
			return "cancelled"
		}
		return string(o.Selected.OptionId)
	}
	assert.Equal(t, "ao", picked(answer(runtime.AllowOnce, all)))
	assert.Equal(t, "aa", picked(answer(runtime.AllowAlways, all)))
	assert.Equal(t, "ro", picked(answer(runtime.DenyCall, all)))
	assert.Equal(t, "ra", picked(answer(runtime.AllowOnce, onlyAlways)), "allowing once never allows always")
	assert.Equal(t, "ao", picked(answer(runtime.AllowAlways, all[1:])))
	assert.Equal(t, "cancelled", picked(answer(runtime.DenyCall, all[:2])))
}

func TestLines(t *testing.T) {
	n := func(i int) *int { return &i }
	assert.Equal(t, "b\nc\n", lines("a\nb\nc\nd", n(2), n(2)))
	assert.Equal(t, "d", lines("a\nb\nc\nd", n(4), nil))
	assert.Equal(t, "", lines("a\n", n(9), n(1)))
	assert.Equal(t, "a\n", lines("a\n", nil, nil))
}

func TestFmtDur(t *testing.T) {
	assert.Equal(t, "30m", fmtDur(30*60e9))
	assert.Equal(t, "1h", fmtDur(3600e9))
	assert.Equal(t, "1h30m", fmtDur(5400e9))
	assert.Equal(t, "300ms", fmtDur(300e6))
}
