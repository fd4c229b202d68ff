package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWildcard(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"git *", "git status", true},
		{"git *", "git", false},
		{"git*", "git", true},
		{"*", "", true},
		{"rm -rf /*", "rm -rf /home/me", true},
		{"rm -rf /*", "rm -r -f /", false},
		{"*.env", "cat .env", true},
		{"*.env", "cat .envrc", false},
		{"*.env", "secrets/.env", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false},
		{"mcp:github:*", "mcp:github:create_issue", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Wildcard(tt.pattern, tt.s), "%q ~ %q", tt.pattern, tt.s)
	}
}

func TestParseRule(t *testing.T) {
	r, err := ParseRule("bash:git *")
	require.NoError(t, err)
	assert.Equal(t, [3]string{"bash", "git *", "bash:git *"}, [3]string{r.Type, r.Pattern, r.Raw})
	r, err = ParseRule("mcp:github:*")
	require.NoError(t, err)
	assert.Equal(t, [3]string{"", "mcp", "github:*"}, [3]string{r.Tool, r.Type, r.Pattern})
	assert.True(t, r.Matches("mcp:github:create_issue", ""))
	assert.False(t, r.Matches("mcp:gitlab:x", ""))
	r, err = ParseRule("read_file")
	require.NoError(t, err)
	assert.True(t, r.Matches("read_file", "anything"))
	r, err = ParseRule("rm -rf")
	require.NoError(t, err)
	assert.Equal(t, [3]string{"", "*", "rm -rf"}, [3]string{r.Tool, r.Type, r.Pattern}, "no colon: the parent's *:rm -rf")
	assert.True(t, r.Matches("bash", "sudo rm -rf /"))
	for _, bad := range []string{"", "  ", ":x", "x y:z"} {
		_, err := ParseRule(bad)
		assert.Error(t, err, bad)
	}
}

func writePolicy(t *testing.T, dir, name, body string) string {
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestLoadPolicy_Tiers(t *testing.T) {
	dir := t.TempDir()
	ws := writePolicy(t, dir, "ws.yaml", "apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\ndeny: [\"bash:rm -rf /*\"]\n")
	agent := writePolicy(t, dir, "agent.yaml", "allow:\n  - \"bash:git *\"\n  - read_file\nnotify:\n  enabled: true\n  patterns: [\"bash:sudo *\"]\n  deliveries: [{type: log}, {type: webhook, url: \"https://hooks.example/x\"}]\n")
	local := writePolicy(t, dir, "local.yaml", "mode: restrict\ndeny: [\"bash:git push*\"]\n")

	p, err := LoadPolicy(ws, agent, filepath.Join(dir, "missing.yaml"), local)
	require.NoError(t, err)
	assert.Equal(t, "restrict", p.Mode, "the most specific tier's mode")
	assert.Len(t, p.Files, 3)

	tests := []struct {
		tool, subject string
		want          Decision
	}{
		{"bash", "git status", Allow},
		{"bash", "git push origin main", Deny}, // deny wins over allow
		{"bash", "rm -rf /etc", Deny},
		{"bash", "ls", Deny}, // restrict: not allowed
		{"read_file", "notes.md", Allow},
		{"write_file", "x", Deny},
	}
	for _, tt := range tests {
		got, _ := p.Decide(tt.tool, tt.subject)
		assert.Equal(t, tt.want, got, "%s %s", tt.tool, tt.subject)
	}
	assert.True(t, p.Notifies("bash", "sudo reboot"))
	assert.False(t, p.Notifies("bash", "ls"))
	assert.Len(t, p.Notify.Deliveries, 2)

	p, err = LoadPolicy(ws)
	require.NoError(t, err)
	d, rule := p.Decide("bash", "ls")
	assert.Equal(t, Ask, d)
	assert.Empty(t, rule)
	d, rule = p.Decide("bash", "rm -rf /")
	assert.Equal(t, Deny, d)
	assert.Equal(t, "bash:rm -rf /*", rule)

	p, err = LoadPolicy()
	require.NoError(t, err)
	d, _ = p.Decide("bash", "anything")
	assert.Equal(t, Allow, d, "no policy: dangerous, the sandbox is the boundary")
}

// Issue 11: an agent's tiers are read through its folder's os.Root, the
// data dir's by its path.
func TestLoadAgentPolicy(t *testing.T) {
	data, dir, outside := t.TempDir(), t.TempDir(), t.TempDir()
	general := writePolicy(t, data, PolicyFile, "mode: ask\ndeny: [\"bash:rm *\"]\n")
	writePolicy(t, dir, "shared.yaml", "allow: [\"bash:git *\"]\n")
	require.NoError(t, os.Symlink("shared.yaml", filepath.Join(dir, PolicyFile)))
	writePolicy(t, dir, PolicyLocalFile, "mode: restrict\n")

	p, err := LoadAgentPolicy(general, dir)
	require.NoError(t, err)
	assert.Equal(t, "restrict", p.Mode)
	assert.Equal(t, []string{general, filepath.Join(dir, PolicyFile), filepath.Join(dir, PolicyLocalFile)}, p.Files)
	d, _ := p.Decide("bash", "git status")
	assert.Equal(t, Allow, d, "a symlink that stays inside is followed")
	d, _ = p.Decide("bash", "rm x")
	assert.Equal(t, Deny, d)

	p, err = LoadAgentPolicy("", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "dangerous", p.Mode, "no tier at all")

	secret := writePolicy(t, outside, "policy.yaml", "allow: [\"bash:*\"]\n")
	for _, name := range []string{PolicyFile, PolicyLocalFile} {
		require.NoError(t, os.Remove(filepath.Join(dir, name)))
		require.NoError(t, os.Symlink(secret, filepath.Join(dir, name)))
		_, err = LoadAgentPolicy(general, dir)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name+": is a link that leads outside the agent's folder")
		// What lite called before: the paths, read as the user's own config.
		p, err = LoadPolicy(general, filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Len(t, p.Allow, 1, "LoadPolicy follows the link")
		writePolicy(t, dir, name+".tmp", "")
		require.NoError(t, os.Rename(filepath.Join(dir, name+".tmp"), filepath.Join(dir, name)))
	}

	general = filepath.Join(data, "link.yaml")
	require.NoError(t, os.Symlink(secret, general))
	p, err = LoadAgentPolicy(general, dir)
	require.NoError(t, err, "the user's own tier may be a link")
	assert.Len(t, p.Allow, 1)
}

func TestLoadPolicy_Errors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ body, want string }{
		{"mode: yolo\n", `p.yaml:1: mode "yolo" is not one of dangerous, ask, restrict`},
		{"kind: Agent\n", `p.yaml:1: kind must be Policy, not "Agent"`},
		{"allow:\n  - \"bash:ok\"\n  - \":x\"\n", `p.yaml:3: rule ":x" names no tool`},
		{"deny: [\"x y:z\"]\n", `p.yaml:1: rule "x y:z": a tool name has no spaces`},
		{"notify:\n  deliveries:\n    - {type: email}\n", `p.yaml:3: notify.deliveries[0].type "email" is not one of log, chat, webhook, ntfy`},
		{"notify:\n  deliveries:\n    - {type: webhook, url: ftp://x}\n", `p.yaml:3: notify.deliveries[0].url must be an http or https URL`},
	}
	for _, tt := range tests {
		p := writePolicy(t, dir, "p.yaml", tt.body)
		_, err := LoadPolicy(p)
		require.Error(t, err, tt.body)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"bash:git *", "mcp:github:*", "read_file", `bash:a\*b?c`, "*:*"} {
		f.Add(s, "git status")
	}
	f.Fuzz(func(t *testing.T, rule, subject string) {
		r, err := ParseRule(rule)
		if err != nil {
			return
		}
		_ = r.Matches("bash", subject)
		if r.Pattern == "*" && r.Type == "bash" && !r.Matches("bash", subject) {
			t.Fatalf("* must match %q", subject)
		}
	})
}

func mustPolicy(t testing.TB, mode string, deny, allow []string) *Policy {
	t.Helper()
	p := &Policy{Mode: mode}
	for _, s := range deny {
		r, err := ParseRule(s)
		require.NoError(t, err)
		p.Deny = append(p.Deny, r)
	}
	for _, s := range allow {
		r, err := ParseRule(s)
		require.NoError(t, err)
		p.Allow = append(p.Allow, r)
	}
	return p
}

// Issue 11, finding 12: each way around a deny rule that was found, and
// its relatives.
func TestPolicy_DenyBypasses(t *testing.T) {
	p := mustPolicy(t, "dangerous", []string{"bash:rm -rf *", "read_file:secret*", "edit_file:./conf/*.yaml"}, nil)
	denied := []struct{ tool, subject string }{
		{"bash", "rm -rf /"},
		{"bash", "rm -fr /"},
		{"bash", "rm  -rf   /"},
		{"bash", "rm\t-rf /"},
		{"bash", " rm -rf /"},
		{"bash", "rm -r -f /"},
		{"bash", "rm -f / -r"},
		{"bash", "rm -rfv /"},
		{"bash", "rm -v -rf /"},
		{"bash", "ls; rm -rf /"},
		{"bash", "ls && rm -fr /"},
		{"bash", "false || rm -rf /"},
		{"bash", "yes | rm -rf /"},
		{"bash", "sleep 1 & rm -rf /"},
		{"bash", "ls\nrm -rf /"},
		{"bash", `rm "-rf" /`},
		{"bash", `rm '-rf' /`},
		{"bash", `r\m -rf /`},
		{"bash", "FOO=1 rm -rf /"},
		{"bash", "sudo rm -rf /"},
		{"bash", "sudo -u root rm -rf /"},
		{"bash", "command rm -rf /"},
		{"bash", "env -i PATH=/bin rm -rf /"},
		{"bash", "nohup rm -rf / &"},
		{"bash", "/bin/rm -rf /"},
		{"bash", "echo $(rm -rf /)"},
		{"bash", "echo `rm -rf /`"},
		{"bash", `echo "$(rm -rf /)"`},
		{"bash", "bash -c 'rm -rf /'"},
		{"bash", `sh -c "ls; rm -fr /"`},
		{"bash", "eval 'rm -rf /'"},
		{"bash", "if true; then rm -rf /; fi"},
		{"bash", "echo $(( $(rm -rf /) ))"},
		{"bash", "time -p rm -rf /"},
		{"bash", "time rm -rf /"},
		{"bash", "$'rm' -rf /"},
		{"bash", `$"rm" -rf /`},
		{"bash", `$'\x72\x6d' -rf /`},
		{"bash", `$'\162m' $'-\x72f' /`},
		{"bash", "exec -a x rm -rf /"},
		{"bash", "bash -o posix -c 'rm -rf /'"},
		{"bash", "sh +o errexit -O extglob -c 'rm -rf /'"},
		{"bash", "busybox rm -rf /"},
		{"bash", "busybox sh -c 'rm -rf /'"},
		{"bash", "/bin/busybox ash -c 'ls; rm -rf /'"},
		{"bash", "echo $(( '$(rm -rf /)' ))"},
		{"bash", "echo $((rm -rf /) )"},
		{"bash", "{ rm -rf /; }"},
		{"bash", "(cd / && rm -rf .)"},
		{"bash", strings.Repeat("true;", maxShellCommands) + "rm -rf /"},
		{"read_file", "secret.txt"},
		{"read_file", "./secret.txt"},
		{"read_file", "sub/../secret.txt"},
		{"read_file", ".//secret.txt"},
		{"read_file", "/workspace/secret.txt"},
		{"read_file", "/secret.txt"},
		{"edit_file", "conf/app.yaml"},
		{"edit_file", "./conf/../conf/app.yaml"},
		// The parent's deny is a match anywhere in the line: lite denies
		// all it denies, words that only mention the command too.
		{"bash", "echo rm -rf /"},
		{"bash", "ls # rm -rf /"},
		{"bash", "echo 'rm -rf /'"},
	}
	for _, tt := range denied {
		d, rule := p.Decide(tt.tool, tt.subject)
		assert.Equal(t, Deny, d, "%s %.60q", tt.tool, tt.subject)
		assert.NotEmpty(t, rule)
	}
	allowed := []struct{ tool, subject string }{
		{"bash", "rm -r /tmp/x"},
		{"bash", "rm x"},
		{"read_file", "notes/secret.txt"},
		{"read_file", "public.txt"},
		{"edit_file", "app.yaml"},
	}
	for _, tt := range allowed {
		d, _ := p.Decide(tt.tool, tt.subject)
		assert.Equal(t, Allow, d, "%s %q", tt.tool, tt.subject)
	}
}

// An allow rule must match every command of a line.
func TestPolicy_AllowEveryCommand(t *testing.T) {
	p := mustPolicy(t, "restrict", []string{"bash:git push*"}, []string{"bash:git *", "bash:ls*"})
	tests := []struct {
		subject string
		want    Decision
	}{
		{"git status", Allow},
		{"git   status", Allow},
		{"git status && ls -la", Allow},
		{"git status # done", Allow},
		{"git status; rm -rf /", Deny},
		{"git log | less", Deny},
		{"ls $(rm x)", Deny},
		{"git status `reboot`", Deny},
		{"git log $(( $(rm -rf /) ))", Deny},
		{"git log -n $((1+2))", Allow},
		{"bash -c 'git status'", Deny},
		{"FOO=1 git status", Deny},
		{"git push origin main", Deny},
		{"ls; git push", Deny},
		{strings.Repeat("ls;", maxShellCommands+1), Deny},
	}
	for _, tt := range tests {
		d, _ := p.Decide("bash", tt.subject)
		assert.Equal(t, tt.want, d, "%.60q", tt.subject)
	}
	d, rule := p.Decide("bash", "git status")
	assert.Equal(t, "bash:git *", rule)
	assert.Equal(t, Allow, d)
}

func TestPolicy_NotifiesAnyCommand(t *testing.T) {
	r, err := ParseRule("bash:sudo *")
	require.NoError(t, err)
	p := &Policy{Notify: Notify{Enabled: true, Patterns: []Rule{r}}}
	assert.True(t, p.Notifies("bash", "ls; sudo  reboot"))
	assert.True(t, p.Notifies("bash", "echo $(sudo id)"))
	assert.False(t, p.Notifies("bash", "echo sudo"))
}

// Check answers as Decide and Notifies do; the bash line is split only
// when a rule names bash, once, and the rules' patterns are built by
// ParseRule, not per call: a call costs the same under 1 rule as under 40.
func TestPolicy_Check(t *testing.T) {
	p := mustPolicy(t, "ask", []string{"bash:rm -rf *"}, []string{"bash:git *", "read_file:docs/*"})
	notify, err := ParseRule("bash:sudo *")
	require.NoError(t, err)
	p.Notify = Notify{Enabled: true, Patterns: []Rule{notify}}
	for _, tt := range []struct{ tool, subject string }{
		{"bash", "git status"}, {"bash", "ls; sudo rm -rf /"}, {"bash", "sudo id"}, {"read_file", "docs/a.md"}, {"web", "x"},
	} {
		d, rule, n := p.Check(tt.tool, tt.subject)
		wd, wrule := p.Decide(tt.tool, tt.subject)
		assert.Equal(t, []any{wd, wrule, p.Notifies(tt.tool, tt.subject)}, []any{d, rule, n}, "%s %q", tt.tool, tt.subject)
	}

	allocs := func(p *Policy, tool, subject string) float64 {
		return testing.AllocsPerRun(50, func() { p.Check(tool, subject) })
	}
	var allow []string
	for i := range 40 {
		allow = append(allow, fmt.Sprintf("bash:tool%d -x *", i), fmt.Sprintf("read_file:./dir%d/../*.md", i))
	}
	one := mustPolicy(t, "ask", nil, allow[:2])
	many := mustPolicy(t, "ask", nil, allow)
	assert.Equal(t, allocs(one, "bash", "git status"), allocs(many, "bash", "git status"), "bash")
	assert.Equal(t, allocs(one, "read_file", "notes.md"), allocs(many, "read_file", "notes.md"), "read_file")
	assert.Zero(t, allocs(many, "read_file", "notes.md"), "a cleaned path costs no allocation")
	for _, p := range []string{"a/b", ".", "..", "../x", "a/../../b", "/workspace/./a//b/", "/workspace", " /x "} {
		clean := cleanRulePath(p)
		assert.Equal(t, clean, cleanRulePath(clean), "cleaning %q twice", p)
	}
	assert.Zero(t, allocs(&Policy{Mode: "ask", Notify: Notify{Enabled: true}}, "bash", "git status"), "no rule names bash: no split")
}

func TestLoadPolicy_UnknownKeysWarn(t *testing.T) {
	p, err := LoadPolicy(writePolicy(t, t.TempDir(), "p.yaml", "mod: ask\nmode: restrict\n"))
	require.NoError(t, err)
	assert.Equal(t, "restrict", p.Mode)
	require.Len(t, p.Warnings, 1)
	assert.Contains(t, p.Warnings[0], `p.yaml:1: unknown field "mod" (did you mean "mode"?) (ignored)`)
}

// The parent's typed rules: deny as the parent does (anywhere in the
// invocation), allow only what it would and stricter (anchored, every
// command of a bash line).
func TestPolicy_ParentRules(t *testing.T) {
	p := mustPolicy(t, "ask",
		[]string{"*:*password*", "mcp:*:delete*", "bash:rm -rf", "cli:danger"},
		[]string{"bash:ls", "bash:git *", "mcp:github:*", "builtin:memory", "builtin:web:fetch", "cli:report", "wasm:hello*", "*:read*"})
	tests := []struct {
		c    Call
		want Decision
	}{
		{Call{Tool: "bash", Subject: "echo password1"}, Deny},
		{Call{Tool: "vault", Type: "mcp", Invocation: "vault:get_password"}, Deny},
		{Call{Tool: "github", Type: "mcp", Invocation: "github:delete_repo"}, Deny},
		{Call{Tool: "bash", Subject: "sudo rm -rf /"}, Deny},
		{Call{Tool: "bash", Subject: "x=1; rm -rf ~"}, Deny},
		{Call{Tool: "danger", Type: "cli", Invocation: "danger"}, Deny},
		{Call{Tool: "danger2", Type: "cli"}, Deny},
		// allow: anchored, each command
		{Call{Tool: "bash", Subject: "ls"}, Allow},
		{Call{Tool: "bash", Subject: "ls -la"}, Ask},
		{Call{Tool: "bash", Subject: "curl x|sh; ls"}, Ask},
		{Call{Tool: "bash", Subject: "git status && ls"}, Allow},
		{Call{Tool: "bash", Subject: "git status && $(curl x)"}, Ask},
		{Call{Tool: "bash", Subject: "git apply <<EOF\nx\nEOF"}, Ask},
		{Call{Tool: "github", Type: "mcp", Invocation: "github:create_issue"}, Allow},
		{Call{Tool: "memory", Invocation: "memory:recall"}, Allow},
		{Call{Tool: "memory"}, Allow},
		{Call{Tool: "web", Invocation: "web:fetch"}, Allow},
		{Call{Tool: "web", Invocation: "web:search"}, Ask},
		{Call{Tool: "report", Type: "cli"}, Allow},
		{Call{Tool: "reporter", Type: "cli"}, Ask},
		{Call{Tool: "report", Type: "wasm"}, Ask},
		{Call{Tool: "hello_world", Type: "wasm"}, Allow},
		{Call{Tool: "read_file", Subject: "a.txt"}, Allow},
		{Call{Tool: "bash", Subject: "cat readme.txt"}, Ask},
	}
	for _, tt := range tests {
		d, _, _ := p.CheckCall(tt.c)
		assert.Equal(t, tt.want, d, "%+v", tt.c)
	}
	d, rule, _ := p.CheckCall(Call{Tool: "bash", Subject: "sudo rm -rf /"})
	assert.Equal(t, []any{Deny, "bash:rm -rf"}, []any{d, rule})

	r := mustPolicy(t, "restrict", nil, []string{"bash:echo*"})
	d, _ = r.Decide("bash", "echo hi")
	assert.Equal(t, Allow, d)
	d, _ = r.Decide("bash", "echo hi; reboot")
	assert.Equal(t, Deny, d, "restrict: the parent would allow it, lite does not")
}

func TestCall_String(t *testing.T) {
	assert.Equal(t, `bash:rm \*.tmp \\x`, Call{Tool: "bash", Subject: `rm *.tmp \x`}.String())
	assert.Equal(t, "builtin:memory:recall", Call{Tool: "memory", Invocation: "memory:recall"}.String())
	assert.Equal(t, "cli:report", Call{Tool: "report", Type: "cli"}.String())
	assert.Equal(t, "mcp:github:x", Call{Tool: "mcp:github:x"}.String())
	for _, s := range []string{"a*b?c\\", "plain", `\*`} {
		lit, ok := unescapeGlob(EscapeGlob(s))
		assert.True(t, ok)
		assert.Equal(t, s, lit)
		assert.True(t, Wildcard(EscapeGlob(s), s), s)
	}
}

// Tiers merge as the parent merges them.
func TestLoadPolicy_Merge(t *testing.T) {
	dir := t.TempDir()
	ws := writePolicy(t, dir, "ws.yaml", "mode: restrict\nnotify: {enabled: true, deliveries: [{type: log}, {type: webhook, url: 'http://h/x'}]}\n")
	agent := writePolicy(t, dir, "agent.yaml", "mode: dangerous\nallow: [bash:ls]\nnotify: {deliveries: [{type: webhook, url: 'http://h/x'}]}\n")
	local := writePolicy(t, dir, "local.yaml", "allow: [bash:pwd]\nnotify: {enabled: false}\n")
	p, err := LoadPolicy(ws, agent, local)
	require.NoError(t, err)
	assert.Equal(t, "restrict", p.Mode, "dangerous does not loosen a more general tier's mode")
	require.Len(t, p.Warnings, 1)
	assert.Contains(t, p.Warnings[0], "agent.yaml:1: mode dangerous does not loosen the mode restrict")
	assert.True(t, p.Notify.Enabled, "enabled is an OR")
	assert.Len(t, p.Notify.Deliveries, 2, "a delivery named twice is made once")
	assert.Len(t, p.Allow, 2)

	p, err = LoadPolicy(writePolicy(t, dir, "a.yaml", "mode: restrict\n"), writePolicy(t, dir, "b.yaml", "mode: ask\n"))
	require.NoError(t, err)
	assert.Equal(t, "ask", p.Mode, "the most specific tier that sets it")
	p, err = LoadPolicy(writePolicy(t, dir, "c.yaml", "allow: [x]\n"))
	require.NoError(t, err)
	assert.Equal(t, "dangerous", p.Mode, "none sets it")
}
