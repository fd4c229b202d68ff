package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  -v   --force ", []string{"-v", "--force"}},
		{`"two words" 'single $x' a\ b`, []string{"two words", "single $x", "a b"}},
		{`"say \"hi\" \$HOME \n"`, []string{`say "hi" $HOME \n`}},
		{`''  ""`, []string{"", ""}},
		{"; rm -rf / && echo $(id) | sh", []string{";", "rm", "-rf", "/", "&&", "echo", "$(id)", "|", "sh"}},
		{"'; rm -rf /'", []string{"; rm -rf /"}},
		{"a'b'\"c\"d", []string{"abcd"}},
	} {
		got, err := SplitArgs(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{`'open`, `"open`, strings.Repeat("a ", 1025), strings.Repeat("a", 65<<10)} {
		_, err := SplitArgs(bad)
		assert.Error(t, err)
	}
}

func TestReloadTools(t *testing.T) {
	r := &ReloadTools{Scan: func() ToolScan {
		return ToolScan{Tools: []DiscoveredTool{{Name: "a", Description: "A."}}, Dirs: []string{"/x/tools"}}
	}}
	res, err := r.Run(t.Context(), nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"discovered_tools":[{"name":"a","description":"A."}],"count":1,"directories_scanned":["/x/tools"]}`, res.Content)
	r.Scan = func() ToolScan { return ToolScan{} }
	res, _ = r.Run(t.Context(), nil)
	assert.JSONEq(t, `{"discovered_tools":[],"count":0,"directories_scanned":null}`, res.Content)
}

// The model writes args: any string splits into words or fails with a
// sentence, within the limits, and joining quoted words splits back the
// same.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`a "b c" 'd e' f\ g`, `; rm -rf /`, `"unterminated`, `''`, `a\`, `"\$x\"y"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitArgs(s)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		require.LessOrEqual(t, len(words), maxArgsWords)
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := SplitArgs(strings.Join(quoted, " "))
		if len(strings.Join(quoted, " ")) > maxArgsBytes {
			return
		}
		require.NoError(t, err)
		require.Equal(t, words, again)
	})
}
