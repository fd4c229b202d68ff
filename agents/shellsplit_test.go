package agents

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitCommands(t *testing.T) {
	tests := []struct {
		line string
		want [][]string
	}{
		{"rm -rf /", [][]string{{"rm", "-rf", "/"}}},
		{"  ls \t -la  ", [][]string{{"ls", "-la"}}},
		{"a; b && c || d | e & f\ng", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}}},
		{`rm "-rf" '/' \x`, [][]string{{"rm", "-rf", "/", "x"}}},
		{`echo "a;b" 'c|d'`, [][]string{{"echo", "a;b", "c|d"}}},
		{"echo $(rm -rf /) `id`", [][]string{{"rm", "-rf", "/"}, {"id"}, {"echo", "$(rm -rf /)", "`id`"}}},
		{`echo "x $(whoami)"`, [][]string{{"whoami"}, {"echo", "x $(whoami)"}}},
		{"echo $((1+2))", [][]string{{"echo", "$((1+2))"}}},
		{"git log $(( $(rm -rf /) ))", [][]string{{"rm", "-rf", "/"}, {"git", "log", "$(( $(rm -rf /) ))"}}},
		{"echo $(( '`id`' + (2) ))", [][]string{{"id"}, {"echo", "$(( '`id`' + (2) ))"}}},
		{`$'rm' $"-rf" /`, [][]string{{"rm", "-rf", "/"}}},
		{`$'\x72m' $'\162\155' $'a\'b\n' $'\q' "$'x'"`, [][]string{{"rm", "rm", "a'b\n", `\q`, "$'x'"}}},
		{"time -p ls", [][]string{{"time", "-p", "ls"}}},
		{"busybox sh -c 'id'", [][]string{{"busybox", "sh", "-c", "id"}, {"id"}}},
		{"bash -o posix +O extglob -c id", [][]string{{"bash", "-o", "posix", "+O", "extglob", "-c", "id"}, {"id"}}},
		{"echo $((echo hi) )", [][]string{{"echo", "hi"}, {"echo", "$((echo hi)"}}},
		{"diff <(ls a) b", [][]string{{"ls", "a"}, {"diff", "<(ls a)", "b"}}},
		{"bash -c 'rm -rf /; ls'", [][]string{{"bash", "-c", "rm -rf /; ls"}, {"rm", "-rf", "/"}, {"ls"}}},
		{"sudo sh -ec 'id'", [][]string{{"sudo", "sh", "-ec", "id"}, {"id"}}},
		{"eval rm -rf /", [][]string{{"eval", "rm", "-rf", "/"}, {"rm", "-rf", "/"}}},
		{"ls 2>&1 | grep x &>/dev/null", [][]string{{"ls", "2>&1"}, {"grep", "x", "&>/dev/null"}}},
		{"if true; then rm x; fi", [][]string{{"true"}, {"rm", "x"}}},
		{"{ a; }; (b && c); ! d", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
		{"ls # ; rm -rf /\npwd", [][]string{{"ls"}, {"pwd"}}},
		{"a#b", [][]string{{"a#b"}}},
		{"ec\\\nho hi", [][]string{{"echo", "hi"}}},
		{"echo ''", [][]string{{"echo", ""}}},
		{"'unclosed ; x", [][]string{{"unclosed ; x"}}},
		{"echo $(ls", [][]string{{"ls"}, {"echo", "$(ls"}}},
		{"", nil},
		{";;&&||", nil},
	}
	for _, tt := range tests {
		got, complete := SplitCommands(tt.line)
		assert.True(t, complete)
		assert.Equal(t, tt.want, got, "%q", tt.line)
	}
}

func TestSplitCommands_Limits(t *testing.T) {
	cmds, complete := SplitCommands(strings.Repeat("a;", maxShellCommands+5))
	assert.False(t, complete)
	assert.Len(t, cmds, maxShellCommands)

	deep := strings.Repeat("$(", 1000) + "rm -rf /" + strings.Repeat(")", 1000)
	cmds, _ = SplitCommands(deep)
	assert.NotEmpty(t, cmds, "deep nesting is cut, not followed to a stack overflow")

	// $((...) ) is read again as $( (...) ): nested, that must not double
	// the work at each level.
	reread := strings.Repeat("$(( ", 15) + "rm -rf /" + strings.Repeat(") )", 15)
	var sp shellSplitter
	sp.s = strings.Repeat(reread+";", 200)
	sp.list(0)
	assert.LessOrEqual(t, sp.reread, len(sp.s)+len(reread))
	assert.Contains(t, sp.out, []string{"rm", "-rf", "/"})
}

func TestNormFlags(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rm -rf /", "rm -fr /"},
		{"rm -fr /", "rm -fr /"},
		{"rm -r -f /", "rm -fr /"},
		{"rm -f / -r", "rm -fr /"},
		{"rm -rfv /", "rm -frv /"},
		{"rm --force -r x", "rm --force -r x"},
		{"rm -r -- -f", "rm -r -- -f"},
		{"head -n5 x", "head -n5 x"},
		{"-rf", "-rf"},
	}
	for _, tt := range tests {
		got, _ := normFlags(strings.Fields(tt.in))
		assert.Equal(t, tt.want, strings.Join(got, " "), tt.in)
	}
}

func TestUnwrapCommand(t *testing.T) {
	forms := func(s string) []string {
		var out []string
		for _, f := range unwrapCommand(strings.Fields(s)) {
			out = append(out, strings.Join(f, " "))
		}
		return out
	}
	assert.Contains(t, forms("FOO=1 BAR=2 rm -rf /"), "rm -rf /")
	assert.Contains(t, forms("sudo -u root -E rm -rf /"), "rm -rf /")
	assert.Contains(t, forms("env -i -u HOME A=b /usr/bin/rm -rf /"), "rm -rf /")
	assert.Contains(t, forms("nohup nice -n 10 timeout -s KILL 5 command rm -rf /"), "rm -rf /")
	assert.Contains(t, forms("xargs -I {} rm -rf {}"), "rm -rf {}")
	assert.Equal(t, []string{"ls -l"}, forms("ls -l"))
}

func FuzzSplitCommands(f *testing.F) {
	for _, s := range []string{"rm -rf /", "ls; rm -fr /", `rm "-rf" /`, "FOO=1 sudo rm -rf /", "echo $(id) `id` \"$(id)\"",
		"bash -c 'a; b'", "eval x y", "a 2>&1 | b &>c", "if a; then b; fi", "a # b", "'", "\"", "$(", "`", "\\", "a\\\nb",
		"$((1+(2)))", "$(( $(a) ))", "$((a) )", "$'\\x72m'", `$"a"`, "<(a) >(b)", "ad bad;cab|dab&&a0\nd1"} {
		f.Add(s)
	}
	deny, err := ParseRule("bash:rm -rf *")
	require.NoError(f, err)
	allowAll, err := ParseRule("bash:*")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, line string) {
		cmds, complete := SplitCommands(line)
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("%q: an empty command", line)
			}
		}
		if simple(line, "abcd0123456789 \t;&|\n") {
			if want := splitReference(line); !equalCommands(cmds, want) {
				t.Fatalf("%q: got %q, want %q", line, cmds, want)
			}
		}
		if !complete {
			return
		}
		p := &Policy{Mode: "restrict", Allow: []Rule{allowAll}}
		if d, _ := p.Decide("bash", line); d != Allow {
			t.Fatalf("%q: bash:* does not allow it", line)
		}
		if simple(line, "abcdefghijklmnopqrstuvwxyz0123456789 \t;&|\n-=/.") {
			p := &Policy{Mode: "dangerous", Deny: []Rule{deny}}
			for _, sep := range []string{"\n", ";", "&&", "|", "||", "&"} {
				if d, _ := p.Decide("bash", line+sep+"rm  -fr /"); d != Deny {
					t.Fatalf("%q: a command after %q escapes the deny rule", line, sep)
				}
			}
		}
	})
}

// simple reports whether line holds only bytes of alphabet.
func simple(line, alphabet string) bool {
	for i := 0; i < len(line); i++ {
		if strings.IndexByte(alphabet, line[i]) < 0 {
			return false
		}
	}
	return true
}

// splitReference splits a line of words and separators only.
func splitReference(line string) [][]string {
	var out [][]string
	for _, part := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(";&|\n", r) }) {
		if w := strings.Fields(part); len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

func equalCommands(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}
