package toolset

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// A WASM tool's manifest picks its env: from what the operator put in
// sandbox.env and the daemon's TZ, LANG and LC_ALL, never from the rest
// of the daemon's environment, whatever a secret there is called.
func TestEnviron_OnlyWhatTheOperatorNames(t *testing.T) {
	daemon := map[string]string{"OPENAI_API_KEY": "x", "DATABASE_URL": "postgres://u:pw@h/db",
		"GLOSSARY_PATH": "/srv/glossary", "TZ": "Europe/Paris", "LANG": "de_DE.UTF-8", "HOME": "/root"}
	lookup := func(k string) (string, bool) { v, ok := daemon[k]; return v, ok }
	env := environ(map[string]config.Secret{"WEATHER_URL": "https://weather.example", "LANG": "C.UTF-8"}, lookup)
	assert.Equal(t, map[string]string{"WEATHER_URL": "https://weather.example", "LANG": "C.UTF-8", "TZ": "Europe/Paris"}, env,
		"the operator's variables (first) and the harmless ones, nothing else")
	assert.Empty(t, environ(nil, func(string) (string, bool) { return "", false }))
}
