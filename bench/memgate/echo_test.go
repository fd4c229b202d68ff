package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/wasmtools"
	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

// echo.wasm is committed; it must be what echo.wat builds to.
func TestEchoWasm_MatchesSource(t *testing.T) {
	src, err := os.ReadFile("echo.wat")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(wattest.Compile(t, src), echoWasm), "echo.wasm is stale: run make echo-wasm")
}

// The tool echoes its arguments through the real WASM engine, within its
// one-page memory and 1 MiB cap.
func TestEchoWasm_Runs(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "echo.wasm"), echoWasm, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.yaml"), echoManifest, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eng, err := wasmtools.New(wasmtools.Options{Mode: "interpreter"})
	require.NoError(t, err)
	defer eng.Close(ctx)
	tool, err := eng.Load(ctx, filepath.Join(dir, "tool.yaml"), wasmtools.ToolOptions{})
	require.NoError(t, err)
	defer tool.Close(ctx)
	assert.Equal(t, "echo", tool.Manifest().Name)
	big := `{"s":"` + string(bytes.Repeat([]byte("x"), 200_000)) + `"}` // more than the 64 KiB buffer
	for _, args := range []string{`{"x":1}`, big} {
		res, err := tool.Run(ctx, []byte(args))
		require.NoError(t, err)
		assert.False(t, res.IsError, "%.200s", res.Content)
		assert.Equal(t, args, res.Content[:min(len(res.Content), len(args))])
	}
}

func TestWithTools(t *testing.T) {
	spec := "spec:\n  model:\n    name: m\n  tools:\n    - type: builtin\n      name: read_file\n\n  soul: ./SOUL.md\n"
	got := withTools(spec, workloadTools)
	assert.Equal(t, "spec:\n  model:\n    name: m\n  soul: ./SOUL.md\n"+workloadTools, got)
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	assert.Equal(t, time.Duration(50), percentile(d, 0.50))
	assert.Equal(t, time.Duration(99), percentile(d, 0.99))
	assert.Equal(t, time.Duration(0), percentile(nil, 0.5))
}
