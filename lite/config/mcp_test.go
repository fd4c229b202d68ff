package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse_MCP(t *testing.T) {
	t.Setenv("DOCS_TOKEN", "t0k")
	c, err := Parse("agnx.yaml", []byte(`mcp:
  idle_timeout_seconds: 30
  servers:
    - {name: docs, url: "https://d.example/mcp", headers: {Authorization: "Bearer ${env:DOCS_TOKEN}", X-Now: "${DOCS_TOKEN}"}}
    - {name: fs, command: npx, args: [-y, x], env: [HOME]}
`))
	require.NoError(t, err)
	assert.Equal(t, 30, c.MCP.IdleTimeoutSeconds)
	assert.Equal(t, 60, c.MCP.CallTimeoutSeconds, "the default")
	require.Len(t, c.MCP.Servers, 2)
	assert.Equal(t, "Bearer ${env:DOCS_TOKEN}", c.MCP.Servers[0].Headers["Authorization"], "read when the server starts")
	assert.Equal(t, "t0k", c.MCP.Servers[0].Headers["X-Now"], "${VAR} is the config's own expansion")
	assert.Equal(t, "mcp", c.MCP.Servers[1].Type)

	for yaml, want := range map[string]string{
		"mcp:\n  servers:\n    - {name: a, command: x}\n    - {name: a, url: 'http://h/'}\n": `agnx.yaml:4: mcp.servers[1].name "a" is already used by mcp.servers[0]`,
		"mcp:\n  servers:\n    - {name: a, command: ./x}\n":                                  "must be a program on PATH or an absolute path",
		"mcp:\n  servers:\n    - {name: a, command: x, read_only: [rel]}\n":                  "must be an absolute path",
		"mcp:\n  servers:\n    - {name: Bad, command: x}\n":                                  `agnx.yaml:3: mcp.servers[0].name "Bad" must be`,
		"mcp:\n  servers:\n    - {type: cli, name: a, command: x}\n":                         "must be mcp or left out",
		"mcp:\n  call_timeout_seconds: -1\n":                                                 "must not be negative",
		"mcp:\n  read_only: [rel]\n":                                                         "mcp.read_only[0] \"rel\" must be an absolute path",
	} {
		_, err := Parse("agnx.yaml", []byte(yaml))
		require.Error(t, err, yaml)
		assert.Contains(t, err.Error(), want)
	}
}
