package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecret_Redacted(t *testing.T) {
	t.Setenv("AGNX_TEST_TG", "tg-secret-1")
	src := "server:\n  admin_token: admin-secret-2\n  api_token: api-secret-3\n" +
		"gateways:\n  telegram:\n    enabled: true\n    bot_token: ${AGNX_TEST_TG}\n" +
		"  external:\n    - {name: d, command: x, env: {TOKEN: env-secret-4}}\n"
	c, err := Parse("agnx.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, "tg-secret-1", c.Gateways.Telegram.BotToken.Value())
	secrets := []string{"tg-secret-1", "admin-secret-2", "api-secret-3", "env-secret-4"}

	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&out, verb+"\n", *c)
		fmt.Fprintf(&out, verb+"\n", c)
		fmt.Fprintf(&out, verb+"\n", c.Server.APIToken)
	}
	slog.New(slog.NewJSONHandler(&out, nil)).Info("cfg", "config", c, "server", c.Server, "token", c.Server.AdminToken)
	slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "config", c, "server", c.Server, "token", c.Server.AdminToken)
	b, err := json.Marshal(c)
	require.NoError(t, err)
	out.Write(b)

	for _, s := range secrets {
		assert.NotContains(t, out.String(), s)
	}
	assert.Contains(t, out.String(), `"token":"[redacted]"`)
	assert.Contains(t, out.String(), `token=[redacted]`)
}

func TestSecret_Empty(t *testing.T) {
	var s Secret
	assert.Equal(t, "", s.String())
	assert.Equal(t, "", s.LogValue().String())
	assert.Equal(t, "[redacted]", Secret("x").String())
	assert.Equal(t, "x", Secret("x").Value())
}
