package toolset

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/sandbox"
	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

// The first compile of a WASM tool shows on the Progress, and is erased
// once the tool is loaded; a pipe gets the step as a line.
func TestTools_WasmCompileShowsProgress(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	a := &agents.Agent{Name: "assistant", Dir: filepath.Join(cfg.DataDir, "agents", "assistant"), Workspace: t.TempDir()}
	dir := filepath.Join(a.Dir, "tools", "big")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.yaml"), []byte("name: big\ndescription: compiles slowly\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.wasm"), wattest.Compile(t, bigWat(1000)), 0o644))
	w := &syncWriter{wrote: make(chan struct{}, 1)}
	f := New(Options{Config: cfg, Sandboxes: sandbox.New(sandbox.Options{Config: cfg.Sandbox, DataDir: cfg.DataDir}),
		Progress:    NewProgress(w, false),
		SlowCompile: time.Nanosecond, // the compile always takes longer
	})
	ts, err := f.Build(a)
	require.NoError(t, err)
	CloseTools(ts)
	f.Close()
	assert.Equal(t, "compiling the WASM tool big (the first time only)\n", w.String())
}

// bigWat is a command module of n functions of 81 instructions. 1,000
// (126 KB) take wazero 12-15 ms to compile here with its interpreter and
// 40-55 ms with its compiler (0.5-0.7 s under -race), far past the 1 ns
// threshold: a timer that long overdue fires at the scheduler's next
// turn, and a goroutine running 10 ms is preempted for one. A few-byte
// module could beat the timer; a Go module takes 20 s under -race.
func bigWat(n int) []byte {
	var b strings.Builder
	b.WriteString(`(module (memory (export "memory") 1) (func (export "_start"))` + "\n")
	for range n {
		b.WriteString("(func (param i32) (result i32) local.get 0")
		for j := range 20 {
			fmt.Fprintf(&b, " i32.const %d i32.add i32.const 3 i32.mul", j)
		}
		b.WriteString(")\n")
	}
	b.WriteString(")\n")
	return []byte(b.String())
}
