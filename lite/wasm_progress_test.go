package lite

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first compile of a WASM tool shows on the Progress, and is erased
// once the tool is loaded; a pipe gets the step as a line.
func TestTools_WasmCompileShowsProgress(t *testing.T) {
	manifest, err := os.ReadFile("../wasmtools/examples/calc/tool.yaml")
	require.NoError(t, err)
	c, cfg := newTestCache(t)
	dir := filepath.Join(cfg.AgentsDir, "assistant", "tools", "calc")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.yaml"), manifest, 0o644))
	buildWasm(t, "calc", filepath.Join(dir, "calc.wasm"))
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	c.tools.wasm.progress = NewProgress(w, false)
	c.tools.wasm.slow = time.Nanosecond // a compile always takes longer
	_, err = c.LoadAgent("assistant")
	require.NoError(t, err)
	c.close()
	assert.Equal(t, "compiling the WASM tool calc (the first time only)\n", w.String())
}
