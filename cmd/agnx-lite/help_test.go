package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runArgs runs the CLI with exactly args.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Help goes to standard output with exit 0: the list with one aligned line
// per command, and each command's purpose, example and flags.
func TestCLI_Help(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"-h"}, {"--help"}, {"help", "help"}} {
		code, out, errs := runArgs(args...)
		require.Equal(t, 0, code, args)
		assert.Empty(t, errs)
		assert.Contains(t, out, "Commands:")
		assert.Contains(t, out, "Global flags (before or after the command):")
	}
	_, out, _ := runArgs("help")
	col := -1
	for name := range commands() {
		re := regexp.MustCompile(`(?m)^  ` + name + ` +(\S)`)
		loc := re.FindStringSubmatchIndex(out)
		require.NotNil(t, loc, "command %s is listed", name)
		start := strings.LastIndex(out[:loc[2]], "\n") + 1
		if col < 0 {
			col = loc[2] - start
		}
		assert.Equal(t, col, loc[2]-start, "the purpose of %s starts in the same column", name)
	}

	for name, c := range commands() {
		if c.run == nil {
			continue
		}
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			code, out, errs := runArgs(args...)
			require.Equal(t, 0, code, "%v: %s", args, errs)
			assert.Empty(t, errs, args)
			assert.Contains(t, out, "Usage: agnx-lite "+c.usage, args)
			assert.Contains(t, out, "Example:\n  "+c.example, args)
			assert.Contains(t, out, "--data-dir", args)
			assert.NotEmpty(t, c.example)
		}
	}
	_, out, _ = runArgs("help", "chat")
	assert.Contains(t, out, "-a, --agent string", "a command's own flags")
}

// Global flags may come before the command as well as after it.
func TestCLI_GlobalFlagsBeforeCommand(t *testing.T) {
	c := newCLI(t)
	code, _, errs := runArgs("-d", c.dir, "-c", c.cfg, "init")
	require.Equal(t, 0, code, errs)
	assert.FileExists(t, filepath.Join(c.dir, "agents", "assistant", "agent.yaml"))
	code, out, errs := runArgs("-q", "--data-dir="+c.dir, "-c", c.cfg, "agent", "list", "-v")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "assistant")

	code, out, _ = runArgs("--version")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "agnx-lite dev")
	code, _, errs = runArgs("--bogus", "doctor")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "unknown flag: --bogus")
}

// The completion scripts parse, and bash's completes command names and
// subcommands.
func TestCLI_Completions(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errs := runArgs("completions", sh)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "agnx-lite")
		if _, err := exec.LookPath(sh); err == nil {
			f := filepath.Join(t.TempDir(), "c."+sh)
			require.NoError(t, os.WriteFile(f, []byte(out), 0o600))
			b, err := exec.Command(sh, "-n", f).CombinedOutput()
			require.NoError(t, err, "%s -n: %s", sh, b)
		}
	}
	code, _, errs := runArgs("completions", "tcsh")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "bash, zsh or fish")

	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	_, script, _ := runArgs("completions", "bash")
	f := filepath.Join(t.TempDir(), "c.bash")
	require.NoError(t, os.WriteFile(f, []byte(script), 0o600))
	probe := `source "$1"; complete -p agnx-lite
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _agnx_lite; echo "${COMPREPLY[*]}"; }
comp agnx-lite -d /x ag
comp agnx-lite agent ''
comp agnx-lite help se
comp agnx-lite --data`
	out, err := exec.Command("bash", "-c", probe, "bash", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "complete -o filenames -F _agnx_lite agnx-lite\nagent\nlist validate create export import\n"+
		"serve service session\n--data-dir\n", string(out))
}
