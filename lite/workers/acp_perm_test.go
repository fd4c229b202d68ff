package workers

import (
	"testing"

	"github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestQuestion(t *testing.T) {
	kind := func(k acp.ToolKind) *acp.ToolKind { return &k }
	title := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		tc   acp.ToolCallUpdate
		want runtime.Question
	}{
		{"execute string", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), RawInput: map[string]any{"command": "make test"}},
			runtime.Question{Tool: "bash", Subject: "make test"}},
		{"execute argv", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), RawInput: map[string]any{"command": []any{"git", "status"}}},
			runtime.Question{Tool: "bash", Subject: "git status"}},
		{"execute title only", acp.ToolCallUpdate{Kind: kind(acp.ToolKindExecute), Title: title("`rm x`")},
			runtime.Question{Tool: "bash", Subject: "`rm x`"}},
		{"edit in folder", acp.ToolCallUpdate{Kind: kind(acp.ToolKindEdit), Locations: []acp.ToolCallLocation{{Path: "/w/src/a.go"}}},
			runtime.Question{Tool: "write_file", Subject: "src/a.go"}},
		{"delete outside", acp.ToolCallUpdate{Kind: kind(acp.ToolKindDelete), RawInput: map[string]any{"file_path": "/etc/passwd"}},
			runtime.Question{Tool: "write_file", Subject: "/etc/passwd"}},
		{"move", acp.ToolCallUpdate{Kind: kind(acp.ToolKindMove), RawInput: map[string]any{"path": "/w/b"}},
			runtime.Question{Tool: "write_file", Subject: "b"}},
		{"read", acp.ToolCallUpdate{Kind: kind(acp.ToolKindRead), Locations: []acp.ToolCallLocation{{Path: "/w/../x"}}},
			runtime.Question{Tool: "read_file", Subject: "/w/../x"}},
		{"search", acp.ToolCallUpdate{Kind: kind(acp.ToolKindSearch), RawInput: map[string]any{"pattern": "TODO"}},
			runtime.Question{Tool: "read_file", Subject: "TODO"}},
		{"fetch", acp.ToolCallUpdate{Kind: kind(acp.ToolKindFetch), RawInput: map[string]any{"url": "https://example.com"}},
			runtime.Question{Tool: "web", Subject: "https://example.com"}},
		{"other", acp.ToolCallUpdate{Kind: kind(acp.ToolKindOther), Title: title("mcp__x__y")},
			runtime.Question{Tool: "codex", Subject: "mcp__x__y"}},
		{"no kind", acp.ToolCallUpdate{Title: title("Switch mode")},
			runtime.Question{Tool: "codex", Subject: "Switch mode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, question("codex", "/w", tc.tc))
		})
	}
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
