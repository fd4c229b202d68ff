package lite

import (
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

// ValidateAgents builds an agent the way the cache does, so every reason
// an agent fails to load is a reason validate fails, with the same text.
func TestValidateAgents_SameErrorAsLoad(t *testing.T) {
	breaks := map[string]func(t *testing.T, dir string){
		"broken tool manifest": func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools", "x"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "x", "tool.yaml"), []byte("name: [\n"), 0o644))
		},
		"missing wasm module": func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools", "x"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "x", "tool.yaml"), []byte("name: x\ndescription: d\n"), 0o644))
		},
		"zero tool result tokens": func(t *testing.T, dir string) {
			setSpec(t, dir, "  session:\n    context: {max_tool_result_tokens: 0}\n")
		},
		"bad policy": func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, agents.PolicyFile), []byte("mode: [\n"), 0o644))
		},
		"unknown builtin": func(t *testing.T, dir string) {
			setSpec(t, dir, "  tools:\n    - {type: builtin, name: teleport}\n")
		},
		"cli tool not executable": func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o644))
			setSpec(t, dir, "  tools:\n    - {type: cli, name: x, command: run}\n")
		},
		"openrouter without a key": func(t *testing.T, dir string) {
			t.Setenv("OPENROUTER_API_KEY", "")
			cachetest.Edit(t, filepath.Join(dir, agents.FileName), func(string) string {
				return "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: assistant\nspec:\n  model:\n    provider: openrouter\n    name: m\n"
			})
		},
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			c, cfg := newTestCache(t)
			require.Equal(t, []error{nil}, ValidateAgents(cfg, []string{"assistant"}, nil), "the default agent is valid")
			brk(t, filepath.Join(cfg.AgentsDir, "assistant"))

			_, loadErr := c.LoadAgent("assistant")
			require.Error(t, loadErr)
			errs := ValidateAgents(cfg, []string{"assistant"}, nil)
			require.Len(t, errs, 1)
			assert.EqualError(t, errs[0], loadErr.Error())
		})
	}

	_, cfg := newTestCache(t)
	errs := ValidateAgents(cfg, []string{"ghost", "assistant"}, nil)
	assert.ErrorContains(t, errs[0], `no agent "ghost"`)
	assert.NoError(t, errs[1])
}
