package config

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"A": "alpha", "EMPTY": "", "N": "42"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"x-${A}-${N}", "x-alpha-42", ""},
		{"${MISSING:-dflt}", "dflt", ""},
		{"${EMPTY:-dflt}", "", ""},       // set but empty: Agnx keeps it empty
		{"${MISSING:-${A}}", "${A}", ""}, // no nesting
		{"${A:-x}${MISSING:-$$}", "alpha$$", ""},
		{"${EMPTY}", "", ""},
		{"${A:-dflt}", "alpha", ""},
		{"${MISSING:-}", "", ""},
		{"${MISSING:-a:-b}", "a:-b", ""},
		{"$$", "$", ""},
		{"pa$$word", "pa$word", ""},
		{"$${A}", "${A}", ""},
		{"$A $ 5$", "$A $ 5$", ""},
		{"${MISSING}", "", "f.yaml:7: environment variable MISSING is not set (use ${MISSING:-default} for a default)"},
		{"${A", "", `f.yaml:7: "${" is not closed by "}" (write $$ for a literal dollar)`},
		{"${}", "", "f.yaml:7: ${} is not a valid reference: use ${VAR} or ${VAR:-default}"},
		{"${1X}", "", "f.yaml:7: ${1X} is not a valid reference: use ${VAR} or ${VAR:-default}"},
		{"${A-b}", "", "f.yaml:7: ${A-b} is not a valid reference: use ${VAR} or ${VAR:-default}"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := expandEnv("f.yaml", 7, tt.in, lookup)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParse_Env(t *testing.T) {
	t.Setenv("AGNX_TEST_PORT", "9999")
	t.Setenv("AGNX_TEST_ON", "true")
	t.Setenv("AGNX_TEST_TOKEN", "tok: with # yaml: [chars]\nand a newline")
	t.Setenv("AGNX_TEST_HOST", "")
	os.Unsetenv("AGNX_TEST_HOST") // unset: the default applies (t.Setenv restores it)
	src := "# comment with ${AGNX_TEST_UNSET}\n" +
		"server:\n" +
		"  port: ${AGNX_TEST_PORT}\n" +
		"  host: ${AGNX_TEST_HOST:-127.0.0.2}\n" +
		"  api_token: ${AGNX_TEST_TOKEN}\n" +
		"  admin_token: \"$${AGNX_TEST_TOKEN}\"\n" +
		"gateways:\n" +
		"  telegram:\n" +
		"    enabled: ${AGNX_TEST_ON}\n" +
		"    bot_token: '${AGNX_TEST_PORT}'\n" +
		"  external:\n" +
		"    - name: p\n" +
		"      command: run\n" +
		"      env: {'${AGNX_TEST_PORT}': x}\n" +
		"sandbox:\n" +
		"  mode: ${AGNX_TEST_MODE:-trust}\n" +
		"runtime:\n" +
		"  max_loaded_agents: ${AGNX_TEST_PORT}x\n"
	_, err := Parse("agnx.yaml", []byte(src))
	require.EqualError(t, err, "agnx.yaml:18: runtime.max_loaded_agents must be a whole number", "line numbers survive expansion")

	src = src[:len(src)-len("runtime:\n  max_loaded_agents: ${AGNX_TEST_PORT}x\n")]
	c, err := Parse("agnx.yaml", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, 9999, c.Server.Port)
	assert.Equal(t, "127.0.0.2", c.Server.Host)
	assert.Equal(t, "tok: with # yaml: [chars]\nand a newline", c.Server.APIToken.Value(), "values are never re-parsed as YAML")
	assert.Equal(t, "${AGNX_TEST_TOKEN}", c.Server.AdminToken.Value())
	assert.True(t, c.Gateways.Telegram.Enabled)
	assert.Equal(t, Secret("9999"), c.Gateways.Telegram.BotToken, "a quoted number stays a string")
	assert.Equal(t, map[string]Secret{"${AGNX_TEST_PORT}": "x"}, c.Gateways.External[0].Env, "keys are not expanded")
	assert.Equal(t, "trust", c.Sandbox.Mode)
	assert.Equal(t, 3, c.doc.Line("server.port"))
}

func TestParse_EnvErrorNeverShowsValues(t *testing.T) {
	t.Setenv("AGNX_TEST_SECRET", "hunter2")
	_, err := Parse("agnx.yaml", []byte("server:\n  port: ${AGNX_TEST_SECRET}\n"))
	require.Error(t, err)
	assert.Equal(t, "agnx.yaml:2: server.port must be a whole number", err.Error())
}
