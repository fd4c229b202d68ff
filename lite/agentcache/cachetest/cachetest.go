// Package cachetest holds the fixtures shared by the agent cache's tests
// (lite/agentcache) and the root's tests that build agents through it: a
// data dir made as "agnx-lite init" makes it, later edits of an agent's
// files, a small WASM tool, a provider whose builds can be held and a
// fake measure of what tools hold. It imports lite/config and
// lite/toolset but not the cache, so the cache's own tests can use it.
package cachetest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Init is the default configuration over a new data dir in t.TempDir(),
// initialized as "agnx-lite init" does (agnx.yaml, the assistant agent).
func Init(t testing.TB) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.AgentsDir = filepath.Join(dir, "agents")
	_, err := config.Init(cfg)
	require.NoError(t, err)
	return cfg
}

// Edit rewrites a file with a modification time in the future, as a later
// edit would have, without waiting for the clock.
func Edit(t testing.TB, path string, fn func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(fn(string(data))), 0o644))
	future := time.Now().Add(time.Duration(len(data)) * time.Second)
	require.NoError(t, os.Chtimes(path, future, future))
}

// EchoTool puts the memory gate's echo tool (a WASI module of 309 bytes,
// from bench/memgate/echo.wat) in dir: the tests of the cache's module
// lifecycle need a module, not a Go runtime compiled under emulation.
func EchoTool(t testing.TB, dir string) {
	t.Helper()
	// From the module's root: the path of this file that runtime.Caller
	// gives is the module's import path under -trimpath (make test).
	memgate := filepath.Join(testenv.ModuleRoot(t), "bench", "memgate")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range []string{"tool.yaml", "echo.wasm"} {
		data, err := os.ReadFile(filepath.Join(memgate, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
}

// NewProvider is the shape of the cache's provider maker.
type NewProvider = func(agents.Model) (runtime.Provider, error)

// GateBuilds wraps made so that each build blocks in its middle (where
// the provider is made) until gate is closed; it counts the builds and
// tells of each on started.
func GateBuilds(made NewProvider) (gated NewProvider, gate chan struct{}, builds *atomic.Int32, started chan struct{}) {
	gate, builds, started = make(chan struct{}), new(atomic.Int32), make(chan struct{}, 8)
	return func(m agents.Model) (runtime.Provider, error) {
		builds.Add(1)
		started <- struct{}{}
		<-gate
		return made(m)
	}, gate, builds, started
}

// FakeHeld stands for the tool factory's measure (toolset.Options.Measure):
// every module measured with it holds code and heap bytes (it is read
// once before and once after each load).
func FakeHeld(code, heap int64) func() toolset.Held {
	var calls atomic.Int64
	return func() toolset.Held {
		n := calls.Add(1) / 2
		return toolset.Held{Code: n * code, Heap: n * heap}
	}
}
