package config

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandbox.network_helper picks the helper of network: true (auto by
// default); sandbox.env takes ${VAR} like every value and keeps its
// values out of what prints.
func TestParse_SandboxNetworkHelperAndEnv(t *testing.T) {
	c, err := Parse("agnx.yaml", nil)
	require.NoError(t, err)
	assert.Equal(t, "auto", c.Sandbox.NetworkHelper)
	assert.Empty(t, c.Sandbox.Env)

	t.Setenv("AGNX_TEST_WEATHER_KEY", "weather-secret-1234")
	c, err = Parse("agnx.yaml", []byte("sandbox:\n  network_helper: pasta\n  env:\n"+
		"    WEATHER_API_KEY: ${AGNX_TEST_WEATHER_KEY}\n    GLOSSARY: /srv/glossary\n"))
	require.NoError(t, err)
	assert.Equal(t, "pasta", c.Sandbox.NetworkHelper)
	assert.Equal(t, map[string]Secret{"WEATHER_API_KEY": "weather-secret-1234", "GLOSSARY": "/srv/glossary"}, c.Sandbox.Env)
	assert.NotContains(t, fmt.Sprintf("%v %+v", c.Sandbox, c), "weather-secret-1234")

	for src, want := range map[string]string{
		"sandbox:\n  network_helper: vde\n":       `agnx.yaml:2: sandbox.network_helper "vde" is not one of auto, slirp4netns, pasta`,
		"sandbox:\n  env:\n    1ST: x\n":          `agnx.yaml:2: sandbox.env names "1ST", which is not a variable name`,
		"sandbox:\n  env:\n    'A B': x\n":        `"A B", which is not a variable name`,
		"sandbox:\n  env:\n    X: ${AGNX_NOPE}\n": "environment variable AGNX_NOPE is not set",
	} {
		_, err := Parse("agnx.yaml", []byte(src))
		assert.ErrorContains(t, err, want, src)
	}
}
