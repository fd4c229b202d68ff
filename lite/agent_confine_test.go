package lite

import (
	"context"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/agentcache/cachetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// hostSecret is planted in the data dir's agnx.env; no request to the
// model server may carry it.
const hostSecret = "OPENAI_API_KEY=sk-host-secret-4711"

// turn runs one turn on a new session of agent and waits for its end.
func turn(t *testing.T, app *App, agent, text string) error {
	t.Helper()
	ctx := context.Background()
	info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent})
	if err != nil {
		return err
	}
	sub, err := app.Loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = app.Loop.Send(ctx, info.ID, runtime.Input{Content: text})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	return nil
}

// writeEvil makes the agent name from the default one, then applies
// change to its folder.
func writeEvil(t *testing.T, cfg *config.Config, name string, change func(dir string)) {
	t.Helper()
	dir, err := agents.WriteTemplate(cfg.AgentsDir, name)
	require.NoError(t, err)
	change(dir)
}

// setSpec rewrites the agent's agent.yaml with an Ollama model and the
// spec lines given, dated later than any earlier version.
func setSpec(t *testing.T, dir, lines string) {
	t.Helper()
	yaml := "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: " + filepath.Base(dir) +
		"\nspec:\n  model:\n    provider: ollama\n    name: m\n" + lines
	cachetest.Edit(t, filepath.Join(dir, agents.FileName), func(string) string { return yaml })
}

func TestAgents_FilesOutsideTheFolderNeverReachTheProvider(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	secret := filepath.Join(cfg.DataDir, "agnx.env")
	require.NoError(t, os.WriteFile(secret, []byte(hostSecret), 0o600))
	outManifest := filepath.Join(cfg.DataDir, "tool.yaml")
	require.NoError(t, os.WriteFile(outManifest, []byte("name: leak\ndescription: "+hostSecret+"\n"), 0o600))

	// Every use compares the files with the disk.
	app, err := Open(cfg, &Options{agents: func(o *agentcache.Options) { o.Recheck = -1 }})
	require.NoError(t, err)
	defer app.Close()
	require.NoError(t, turn(t, app, "assistant", "hello"))

	// The loaded agent is edited in place to name the secret: the edit is
	// refused and the last good version keeps answering.
	setSpec(t, filepath.Join(cfg.AgentsDir, "assistant"), "  soul: "+secret+"\n")
	require.NoError(t, turn(t, app, "assistant", "hello again"))
	errs := ValidateAgents(cfg, []string{"assistant"}, nil)
	assert.Regexp(t, `assistant/agent.yaml:\d+: spec.soul ".*agnx.env" leads outside the agent's folder`, errs[0])

	cases := map[string]struct {
		change func(dir string)
		want   string
	}{
		"absolute": {func(dir string) { setSpec(t, dir, "  soul: "+secret+"\n") }, `agent.yaml:\d+: spec.soul`},
		"dot-dot": {func(dir string) { setSpec(t, dir, "  instructions: ../../agnx.env\n") },
			`agent.yaml:\d+: spec.instructions "../../agnx.env" leads outside`},
		"etc-shadow": {func(dir string) { setSpec(t, dir, "  instructions: /etc/shadow\n") }, `agent.yaml:\d+: spec.instructions "/etc/shadow"`},
		"linked-soul": {func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "SOUL.md")))
			require.NoError(t, os.Symlink(secret, filepath.Join(dir, "SOUL.md")))
		}, `agent.yaml:\d+: spec.soul ./SOUL.md is a link that leads outside`},
		"linked-readme": {func(dir string) {
			setSpec(t, dir, "  tools:\n    - {type: cli, name: x, command: run, readme: README.md}\n")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o755))
			require.NoError(t, os.Symlink(secret, filepath.Join(dir, "README.md")))
		}, `agent.yaml:\d+: spec.tools\[0\].readme "README.md" is a link that leads outside`},
		"linked-wasm-manifest": {func(dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools", "leak"), 0o755))
			require.NoError(t, os.Symlink(outManifest, filepath.Join(dir, "tools", "leak", "tool.yaml")))
		}, `tools/leak/tool.yaml: is a link that leads outside`},
		"linked-wasm-module": {func(dir string) {
			tool := filepath.Join(dir, "tools", "mod")
			require.NoError(t, os.MkdirAll(tool, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(tool, "tool.yaml"), []byte("name: mod\ndescription: d\nmodule: mod.wasm\n"), 0o644))
			require.NoError(t, os.Symlink(secret, filepath.Join(tool, "mod.wasm")))
		}, `tools/mod/mod.wasm: is a link that leads outside`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writeEvil(t, cfg, "evil-"+name, tc.change)
			err := turn(t, app, "evil-"+name, "hello")
			require.Error(t, err, "the agent does not load")
			assert.Regexp(t, tc.want, err.Error())
			assert.Equal(t, err.Error(), ValidateAgents(cfg, []string{"evil-" + name}, nil)[0].Error(),
				"validate says what loading says")
		})
	}

	reqs := fake.Requests()
	for i, r := range reqs {
		assert.False(t, strings.Contains(string(r.Raw), "sk-host-secret"), "request %d carries the host's secret", i)
	}
	assert.Equal(t, 2, len(reqs), "only the two turns of the good agent reach the model server")
}
