package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mcpSpec = header + "spec:\n  model: {provider: ollama, name: qwen3}\n  tools:\n"

func TestLoad_MCPEntries(t *testing.T) {
	dir := writeAgent(t, map[string]string{FileName: mcpSpec +
		"    - {type: cli, name: jq, command: jq, env: [TOKEN]}\n" +
		"    - type: mcp\n      name: fs\n      command: npx\n      args: [-y, server]\n" +
		"      env: {API_KEY: '${env:KEY}', MODE: fast}\n      read_only: [lib]\n      idle_timeout_seconds: 30\n" +
		"    - {type: mcp, name: gh, url: 'https://x.example/mcp', headers: {Authorization: 'Bearer ${env:GH}'}, transport: sse}\n" +
		"    - {type: mcp, name: listed, command: srv, env: [A, B]}\n"})
	a, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, a.Tools, 4)
	assert.Equal(t, []string{"TOKEN"}, a.Tools[0].Env.Names)
	fs := a.Tools[1]
	assert.Equal(t, map[string]string{"API_KEY": "${env:KEY}", "MODE": "fast"}, fs.Env.Map())
	assert.Equal(t, []string{"lib"}, fs.ReadOnly)
	assert.Equal(t, 30, fs.IdleTimeoutSeconds)
	assert.Equal(t, "sse", a.Tools[2].Transport)
	assert.Equal(t, "Bearer ${env:GH}", a.Tools[2].Headers["Authorization"])
	assert.Equal(t, map[string]string{"A": "${env:A}", "B": "${env:B}"}, a.Tools[3].Env.Map())
}

func TestLoad_MCPEntryErrors(t *testing.T) {
	cases := map[string]struct{ entry, want string }{
		"bad name":          {"{type: mcp, name: GitHub, command: x}", "agent.yaml:8: spec.tools[0].name \"GitHub\" must be"},
		"long name":         {"{type: mcp, name: a123456789012345678901234567890123, command: x}", "must be 1 to 32"},
		"neither":           {"{type: mcp, name: a}", "needs a command or a url"},
		"both":              {"{type: mcp, name: a, command: x, url: 'http://h/'}", "exactly one of command"},
		"stdio url":         {"{type: mcp, name: a, url: 'http://h/', transport: stdio}", "transport stdio needs a command"},
		"http command":      {"{type: mcp, name: a, command: x, transport: http}", "needs a url"},
		"bad transport":     {"{type: mcp, name: a, url: 'http://h/', transport: ws}", "is not one of stdio, http, sse"},
		"bad url":           {"{type: mcp, name: a, url: 'ftp://h/'}", "is not an http:// or https:// URL"},
		"url with env":      {"{type: mcp, name: a, url: 'http://h/', env: {A: b}}", "is a url server"},
		"headers on stdio":  {"{type: mcp, name: a, command: x, headers: {A: b}}", "headers are for a url server"},
		"env bad name":      {"{type: mcp, name: a, command: x, env: {'A-B': c}}", "must be a variable name"},
		"header newline":    {"{type: mcp, name: a, url: 'http://h/', headers: {A: \"b\\nc\"}}", "is not a valid header"},
		"read_only escape":  {"{type: mcp, name: a, command: x, read_only: [../up]}", "must be an absolute path or a path inside"},
		"negative idle":     {"{type: mcp, name: a, command: x, idle_timeout_seconds: -1}", "must be at least 0"},
		"env of wrong kind": {"{type: mcp, name: a, command: x, env: 3}", "must be a list of variable names or a mapping"},
		"env nested":        {"{type: mcp, name: a, command: x, env: {A: [1]}}", "spec.tools[0].env.A must be a string"},
		"cli env mapping":   {"{type: cli, name: a, command: x, env: {A: b}}", "env of a cli tool is a list of variable names"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeAgent(t, map[string]string{FileName: mcpSpec + "    - " + c.entry + "\n"})
			_, err := Load(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("duplicate", func(t *testing.T) {
		dir := writeAgent(t, map[string]string{FileName: mcpSpec + "    - {type: mcp, name: a, command: x}\n    - {type: mcp, name: a, url: 'http://h/'}\n"})
		_, err := Load(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agent.yaml:9: spec.tools[1].name \"a\" is already used by spec.tools[0]")
	})
}
