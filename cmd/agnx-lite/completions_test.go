package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completionScript writes the script for sh to a file, or skips when sh
// is not installed (ci/deps.sh installs zsh and fish).
func completionScript(t *testing.T, sh string) string {
	t.Helper()
	if _, err := exec.LookPath(sh); err != nil {
		t.Skipf("no %s on PATH to load its completion script (ci/deps.sh installs it)", sh)
	}
	code, out, errs := runArgs("completions", sh)
	require.Equal(t, 0, code, errs)
	f := filepath.Join(t.TempDir(), "agnx-lite."+sh)
	require.NoError(t, os.WriteFile(f, []byte(out), 0o600))
	return f
}

// Each command's own flags are completed, read from the flags it declares.
func TestCommandFlags(t *testing.T) {
	flags := commandFlags(commands())
	assert.Equal(t, "--base-url --model --provider", flagWords(flags["init"], false))
	assert.Equal(t, "--agent -a --continue -C --server -s --session", flagWords(flags["chat"], false))
	assert.Equal(t, "--agent -a --server -s --session", flagWords(flags["chat"], true), "the ones that take a value")
	assert.Contains(t, flagWords(flags["service"], false), "--dry-run", "a subcommand's own flags count")
	assert.Empty(t, flags["version"])
	for name, fl := range flags {
		for _, f := range fl {
			assert.NotContains(t, []string{"config", "data-dir", "verbose", "quiet", "help"}, f.long, "%s: globals are offered apart", name)
		}
	}
}

func TestCompletions_BashCompletesFlags(t *testing.T) {
	f := completionScript(t, "bash")
	probe := `source "$1"
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _agnx_lite; echo "${COMPREPLY[*]}"; }
comp agnx-lite chat --a
comp agnx-lite -d /x run --me
comp agnx-lite init --p
comp agnx-lite service install --dr
comp agnx-lite --v`
	out, err := exec.Command("bash", "-c", probe, "bash", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "--agents-dir --agent\n--message\n--provider\n--dry-run\n--verbose\n", string(out))
}

// zsh loads the script; its function, with the completion builtins
// stubbed to print what they are given, offers the command's flags.
func TestCompletions_ZshLoadsAndOffersFlags(t *testing.T) {
	f := completionScript(t, "zsh")
	out, err := exec.Command("zsh", "-n", f).CombinedOutput()
	require.NoError(t, err, "zsh -n: %s", out)
	probe := `autoload -U compinit && compinit -u -D && source "$1" || exit 1
compadd() { [[ $1 == -- ]] && shift; print -r -- "$*" }
_describe() { print -r -- describe }
_files() { print -r -- files }
words=(agnx-lite init --) CURRENT=3 PREFIX=--
_agnx-lite
words=(agnx-lite session '') CURRENT=3 PREFIX=''
_agnx-lite`
	out, err = exec.Command("zsh", "-f", "-c", probe, "zsh", f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2, "%s", out)
	assert.True(t, strings.HasSuffix(lines[0], "--base-url --model --provider"), lines[0])
	assert.Contains(t, lines[0], "--data-dir")
	assert.Equal(t, "list show delete export import", lines[1])
}

func TestCompletions_FishLoadsAndOffersFlags(t *testing.T) {
	f := completionScript(t, "fish")
	out, err := exec.Command("fish", "-n", f).CombinedOutput()
	require.NoError(t, err, "fish -n: %s", out)
	probe := `source $argv[1]; or exit 1
complete -C "agnx-lite chat --se"
echo ==
complete -C "agnx-lite sess"`
	out, err = exec.Command("fish", "--no-config", "-c", probe, f).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "--server\ttalk to the daemon at this URL (default: the running one, if any)\n--session\tcontinue this session\n"+
		"==\nsession\tinspect and manage sessions\n", string(out))
}
