package wasmtools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

func TestNew_Mode(t *testing.T) {
	e, err := New(Options{})
	require.NoError(t, err)
	assert.Contains(t, []string{ModeCompiler, ModeInterpreter}, e.Mode())
	e, err = New(Options{Mode: ModeInterpreter})
	require.NoError(t, err)
	assert.Equal(t, ModeInterpreter, e.Mode())
	_, err = New(Options{Mode: "jit"})
	assert.EqualError(t, err, `wasm mode "jit" is not known: use auto, compiler or interpreter`)
	require.NoError(t, e.Close(context.Background()), "closing an engine never used")
}

func TestEngine_LoadRefuses(t *testing.T) {
	const manifest = "name: bad\ndescription: refused\n"
	cases := []struct {
		name   string
		module any
		want   string
	}{
		{"garbage", []byte("#!/bin/sh\necho not wasm\n"), "is not a valid WebAssembly module (invalid magic number): rebuild it for wasip1"},
		{"truncated", okWasm()[:30], "is not a valid WebAssembly module"},
		{"empty module", module(), "is not a WASI command module: it does not export _start"},
		{"no memory", module(section(1, voidType), section(3, []byte{0}),
			section(7, cat(str("_start"), []byte{0, 0})), section(10, body(0x0b))), "does not export its memory"},
		{"env import", envImportWasm(), "imports env.f, but a tool may import only wasi_snapshot_preview1"},
		{"big memory", bigMemoryWasm(), "needs 125 MiB of memory to start, more than its limits.memory_mb of 64"},
		{"missing", nil, "cannot read the WASM module"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := toolDir(t, manifest, c.module)
			_, err := shared.Load(context.Background(), p, ToolOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(filepath.Dir(p), "tool.wasm"))
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("truncated testtool", func(t *testing.T) { // cut in its code
		data := wattest.Testtool(t)
		_, err := shared.Load(context.Background(), toolDir(t, manifest, data[:len(data)/2]), ToolOptions{})
		assert.ErrorContains(t, err, "is not a valid WebAssembly module")
	})
	t.Run("workspace", func(t *testing.T) {
		_, err := shared.Load(context.Background(), toolDir(t, manifest+"workspace: ro\n", okWasm()), ToolOptions{})
		assert.ErrorContains(t, err, "the tool asks for workspace: ro, but its agent has no workspace")
	})
	t.Run("manifest", func(t *testing.T) {
		p := toolDir(t, manifest+"limits: {memory_mb: 0}\n", okWasm())
		_, err := shared.Load(context.Background(), p, ToolOptions{})
		assert.EqualError(t, err, p+":3: limits.memory_mb must be between 1 and 1024")
	})
}

func TestEngine_Close(t *testing.T) {
	e, err := New(Options{Mode: ModeInterpreter})
	require.NoError(t, err)
	p := toolDir(t, "name: ok\ndescription: says ok\n", okWasm())
	tool, err := e.Load(context.Background(), p, ToolOptions{})
	require.NoError(t, err)
	require.NoError(t, e.Close(context.Background()))
	require.NoError(t, e.Close(context.Background()))
	_, err = e.Load(context.Background(), p, ToolOptions{})
	assert.ErrorIs(t, err, ErrClosed)
	_, err = tool.Run(context.Background(), nil)
	assert.ErrorIs(t, err, ErrClosed)
}

func TestEngine_CacheDir(t *testing.T) {
	if !compilerSupported() {
		t.Skip("the on-disk cache holds compiled code, and there is no compiler here")
	}
	dir := t.TempDir()
	p := toolDir(t, "name: ok\ndescription: says ok\n", okWasm())
	for range 2 { // the second engine finds the module in the cache
		e, err := New(Options{CacheDir: dir})
		require.NoError(t, err)
		tool, err := e.Load(context.Background(), p, ToolOptions{})
		require.NoError(t, err)
		content, _ := call(t, tool, "")
		assert.Equal(t, "ok\n", content)
		require.NoError(t, e.Close(context.Background()))
	}
	entries, err := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "nothing was written to the cache")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	e, err := New(Options{CacheDir: file})
	require.NoError(t, err)
	_, err = e.Load(context.Background(), p, ToolOptions{})
	assert.ErrorContains(t, err, "cannot use "+file+" as the WASM compile cache")
}
