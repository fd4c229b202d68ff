package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

func TestParseEnvFile(t *testing.T) {
	src := "# secrets\n; also a comment\n\nTELEGRAM_BOT_TOKEN=123:abc\n  OPENAI_API_KEY = sk-x  \r\n" +
		"Q1=\"a \\\"b\\\" \\$c \\n\"\nQ2='it''s $x'\nEMPTY=\nEQ=a=b\n"
	vars, err := ParseEnvFile("agnx.env", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"TELEGRAM_BOT_TOKEN": "123:abc",
		"OPENAI_API_KEY":     "sk-x",
		"Q1":                 `a "b" $c \n`,
		"Q2":                 `it''s $x`,
		"EMPTY":              "",
		"EQ":                 "a=b",
	}, vars)

	for name, bad := range map[string]string{
		"no equals":    "JUSTANAME\n",
		"bad name":     "1X=y\n",
		"export":       "export X=y\n",
		"open quote":   "X=\"abc\n",
		"lonely quote": "X='\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseEnvFile("agnx.env", []byte("# c\n"+bad))
			var e *agents.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 2, e.Line)
			assert.NotContains(t, err.Error(), "abc")
		})
	}
}

func TestReadEnvFile_Mode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EnvFileName)

	vars, err := ReadEnvFile(path)
	require.NoError(t, err, "a missing file is no error")
	assert.Nil(t, vars)

	require.NoError(t, os.WriteFile(path, []byte("K=v\n"), 0o600))
	vars, err = ReadEnvFile(path)
	require.NoError(t, err)
	assert.Equal(t, "v", vars["K"])

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = ReadEnvFile(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chmod 600")

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o700))
	_, err = ReadEnvFile(path)
	require.ErrorContains(t, err, "not a regular file")
}

func TestReadEnvFile_Owner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the file to another user")
	}
	// Root may read a file another user owns (a sudo doctor on a
	// service's data dir); a non-root user may not (not testable here).
	path := filepath.Join(t.TempDir(), EnvFileName)
	require.NoError(t, os.WriteFile(path, []byte("K=v\n"), 0o600))
	require.NoError(t, os.Chown(path, 4242, 4242))
	vars, err := ReadEnvFile(path)
	require.NoError(t, err, "root may read a file another user owns")
	assert.Equal(t, "v", vars["K"])
}

func TestReadEnvFile_TooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), EnvFileName)
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("#", maxEnvFileSize+1)), 0o600))
	_, err := ReadEnvFile(path)
	require.ErrorContains(t, err, "larger than")
}

// FuzzParseEnvFile checks that no agnx.env panics the parser, that every
// rejection is file:line: msg on one line, and that accepted names are valid.
func FuzzParseEnvFile(f *testing.F) {
	f.Add([]byte("A=b\n# c\nB=\"x \\\" y\"\nC='z'\n"))
	f.Add([]byte("=\n"))
	f.Add([]byte("X=\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, err := ParseEnvFile("agnx.env", data)
		if err != nil {
			var e *agents.Error
			if !errors.As(err, &e) || e.Line < 1 || strings.Contains(e.Msg, "\n") {
				t.Fatalf("malformed error %q", err)
			}
			return
		}
		for k := range vars {
			if !agents.EnvName(k) {
				t.Fatalf("accepted name %q", k)
			}
		}
	})
}
