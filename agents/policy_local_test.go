package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readLocal(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, PolicyLocalFile))
	require.NoError(t, err)
	return string(data)
}

func TestLocalPolicies_AddAllow_NewFile(t *testing.T) {
	dir := t.TempDir()
	line := "echo 'a*b' && ls\ncat <<EOF\nx\nEOF"
	rule := Call{Tool: "bash", Subject: line}.String()
	added, err := new(LocalPolicies).AddAllow(dir, rule)
	require.NoError(t, err)
	assert.True(t, added)
	st, err := os.Stat(filepath.Join(dir, PolicyLocalFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	added, err = new(LocalPolicies).AddAllow(dir, rule)
	require.NoError(t, err)
	assert.False(t, added, "a rule already there is not added twice")

	require.NoError(t, os.WriteFile(filepath.Join(dir, PolicyFile), []byte("mode: ask\n"), 0o600))
	p, err := LoadAgentPolicy("", dir)
	require.NoError(t, err)
	assert.Equal(t, "ask", p.Mode, "the local tier sets no mode")
	d, got := p.Decide("bash", line)
	assert.Equal(t, Allow, d, "the saved line is allowed, here-document and all")
	assert.Equal(t, rule, got)
	d, _ = p.Decide("bash", "echo 'aXb' && ls\ncat <<EOF\nx\nEOF")
	assert.Equal(t, Ask, d, "the saved line's * is no glob")
	d, _ = p.Decide("bash", "echo 'a*b' && ls")
	assert.Equal(t, Ask, d, "a part of the line is not the line")
}

func TestLocalPolicies_AddAllow_KeepsTheFile(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"block list", "# mine\ndeny:\n  - bash:rm *   # never\nallow:\n  # reads\n  - bash:ls*\n  - >-\n    bash:git\n    status\n\nnotify: {enabled: true}\n",
			"# mine\ndeny:\n  - bash:rm *   # never\nallow:\n  # reads\n  - bash:ls*\n  - >-\n    bash:git\n    status\n  - \"builtin:web\"\n\nnotify: {enabled: true}\n"},
		{"list at the key's indent", "allow:\n- bash:ls\nmode: ask # keep\n", "allow:\n- bash:ls\n- \"builtin:web\"\nmode: ask # keep\n"},
		{"no allow key", "# only a comment", "# only a comment\nallow:\n  - \"builtin:web\"\n"},
		{"empty allow key", "allow:\ndeny: [x]\n", "allow:\n  - \"builtin:web\"\ndeny: [x]\n"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, PolicyLocalFile), []byte(tt.body), 0o640))
		added, err := new(LocalPolicies).AddAllow(dir, "builtin:web")
		require.NoError(t, err, tt.name)
		assert.True(t, added, tt.name)
		assert.Equal(t, tt.want, readLocal(t, dir), tt.name)
		st, err := os.Stat(filepath.Join(dir, PolicyLocalFile))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "%s: the file keeps its permissions", tt.name)
	}

	// A flow list is rewritten from the data: rules and keys stay.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, PolicyLocalFile), []byte("allow: [bash:ls, 'cli:x'] # c\ndeny: [bash:rm]\n"), 0o600))
	_, err := new(LocalPolicies).AddAllow(dir, "builtin:web")
	require.NoError(t, err)
	p, err := LoadAgentPolicy("", dir)
	require.NoError(t, err)
	var allow, deny []string
	for _, r := range p.Allow {
		allow = append(allow, r.Raw)
	}
	for _, r := range p.Deny {
		deny = append(deny, r.Raw)
	}
	assert.Equal(t, []string{"bash:ls", "cli:x", "builtin:web"}, allow)
	assert.Equal(t, []string{"bash:rm"}, deny)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestLocalPolicies_AddAllow_Refuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, PolicyLocalFile)
	require.NoError(t, os.WriteFile(file, []byte("allow: [unclosed\n"), 0o600))
	_, err := new(LocalPolicies).AddAllow(dir, "bash:ls")
	require.Error(t, err)
	assert.Contains(t, err.Error(), PolicyLocalFile+":")
	assert.Equal(t, "allow: [unclosed\n", readLocal(t, dir), "a broken file is left as it is")

	require.NoError(t, os.WriteFile(file, []byte("allow:\n  - "+strings.Repeat("x", MaxLocalPolicy)+"\n"), 0o600))
	_, err = new(LocalPolicies).AddAllow(dir, "bash:ls")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "would grow over")

	outside := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(outside, []byte("allow: []\n"), 0o600))
	require.NoError(t, os.Remove(file))
	require.NoError(t, os.Symlink(outside, file))
	_, err = new(LocalPolicies).AddAllow(dir, "bash:ls")
	require.Error(t, err)
	data, _ := os.ReadFile(outside)
	assert.Equal(t, "allow: []\n", string(data), "a link out of the folder is not written through")

	_, err = new(LocalPolicies).AddAllow(t.TempDir(), " ")
	assert.Error(t, err)
}

// Two allow_always answers at once both land: writes through one
// LocalPolicies do not interleave (without its lock, each read the file
// before the other wrote it and rules were lost).
func TestLocalPolicies_AddAllow_Concurrent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, PolicyLocalFile), []byte("# hand-written\nallow:\n  - bash:ls\n"), 0o600))
	var lp LocalPolicies
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := lp.AddAllow(dir, fmt.Sprintf("bash:cmd%d", i))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	p, err := LoadAgentPolicy("", dir)
	require.NoError(t, err)
	assert.Len(t, p.Allow, 17)
	assert.True(t, strings.HasPrefix(readLocal(t, dir), "# hand-written\n"))
}

// What allow_always saves allows that call and no other.
func TestCall_AllowRule(t *testing.T) {
	tests := []struct {
		c          Call
		rule       string
		same, next Call
	}{
		{Call{Tool: "read_file", Subject: "notes/a*.txt"}, `read_file:notes/a\*.txt`,
			Call{Tool: "read_file", Subject: "./notes/a*.txt"}, Call{Tool: "read_file", Subject: "notes/ab.txt"}},
		{Call{Tool: "report", Type: "cli", Subject: `{"q":"x"}`}, `report:{"q":"x"}`,
			Call{Tool: "report", Type: "cli", Subject: `{"q":"x"}`}, Call{Tool: "report", Type: "cli", Subject: `{"q":"y"}`}},
		{Call{Tool: "bash", Subject: "git status"}, "bash:git status",
			Call{Tool: "bash", Subject: "git status"}, Call{Tool: "bash", Subject: "git status; reboot"}},
		{Call{Tool: "memory", Invocation: "memory:recall"}, "builtin:memory:recall",
			Call{Tool: "memory", Invocation: "memory:recall"}, Call{Tool: "memory", Invocation: "memory:forget"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.rule, tt.c.AllowRule())
		p := mustPolicy(t, "ask", nil, []string{tt.c.AllowRule()})
		d, _, _ := p.CheckCall(tt.same)
		assert.Equal(t, Allow, d, "%+v", tt.same)
		d, _, _ = p.CheckCall(tt.next)
		assert.Equal(t, Ask, d, "%+v", tt.next)
	}
}

// Whatever the file looks like, a rule added is there afterwards with the
// rules before it, or the file is left as it was.
func FuzzLocalPolicies_AddAllow(f *testing.F) {
	for _, s := range []string{"", "allow:\n  - a\n", "allow: [a]\n", "allow:\n- a\n  # c\n-   b\nx: 1\n",
		"allow:\n  - |\n    a\n    b\n", "allow: # c\n\n  - a\n", "deny: [x]\r\nallow:\r\n  - a\r\n", "allow:\n\tx"} {
		f.Add(s, "bash:ls")
	}
	f.Fuzz(func(t *testing.T, body, rule string) {
		dir := t.TempDir()
		file := filepath.Join(dir, PolicyLocalFile)
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		before, err := decodePolicyFile(file, []byte(body))
		if err != nil {
			return
		}
		if _, err := new(LocalPolicies).AddAllow(dir, rule); err != nil {
			data, _ := os.ReadFile(file)
			assert.Equal(t, body, string(data), "a failed add leaves the file")
			return
		}
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		after, err := decodePolicyFile(file, data)
		require.NoError(t, err)
		assert.Contains(t, after.Allow, rule)
		assert.Equal(t, before.Deny, after.Deny)
		for _, r := range before.Allow {
			assert.Contains(t, after.Allow, r)
		}
	})
}
