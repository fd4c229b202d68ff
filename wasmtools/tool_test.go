package wasmtools

import (
	"time"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/wasmtools/wattest"
)

func call(t *testing.T, tool *Tool, args string) (content string, isError bool) {
	t.Helper()
	res, err := tool.Run(context.Background(), []byte(args))
	require.NoError(t, err)
	return res.Content, res.IsError
}

// testtool loads wattest's testtool, its manifest extended with extra.
func testtool(t *testing.T, extra string, opts ToolOptions) *Tool {
	t.Helper()
	return mustLoad(t, toolDir(t, "name: testtool\ndescription: test\n"+extra, wattest.Testtool(t)), opts)
}

func TestTool_RunCalc(t *testing.T) {
	tool := mustLoad(t, example(t, "calc"), ToolOptions{})
	assert.Equal(t, "calc", tool.Spec().Name)
	assert.JSONEq(t, `["expression"]`, mustJSON(t, tool.Spec().Schema, "required"))
	res, err := tool.Run(context.Background(), []byte(`{"expression": "(2 + 3) * -4 ^ 2 / 8"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "-10", res.Content)
	assert.JSONEq(t, `{"value": -10}`, string(res.Details))

	content, isErr := call(t, tool, `{"expression": "1 / (2 - 2)"}`)
	assert.True(t, isErr)
	assert.Contains(t, content, "calc: division by zero at position 3")
	assert.Contains(t, content, "[exit code 1]")
	_, isErr = call(t, tool, `not json`)
	assert.True(t, isErr)
}

func TestTool_RunJSONQ(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.json"), []byte(`{"items": [{"name": "pi", "v": 3.14}]}`), 0o644))
	tool := mustLoad(t, example(t, "jsonq"), ToolOptions{Workspace: ws})
	cases := []struct{ args, want string }{
		{`{"json": "{\"a\": {\"b\": [1, {\"c\": \"deep\"}]}}", "path": "a.b[1].c"}`, "deep\n"},
		{`{"file": "data.json", "path": "items[0].v"}`, "3.14\n"},
		{`{"file": "data.json", "path": "items[0]"}`, "{\n  \"name\": \"pi\",\n  \"v\": 3.14\n}\n"},
	}
	for _, c := range cases {
		content, isErr := call(t, tool, c.args)
		assert.False(t, isErr, content)
		assert.Equal(t, c.want, content)
	}
	content, isErr := call(t, tool, `{"file": "data.json", "path": "items[3]"}`)
	assert.True(t, isErr)
	assert.Contains(t, content, "index 3 is out of range at items (length 1)")
	content, isErr = call(t, tool, `{"file": "missing.json", "path": ""}`)
	assert.True(t, isErr)
	assert.Contains(t, content, "cannot read missing.json")
}

func TestTool_RunWC(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello wasm world\nsecond line\n"), 0o644))
	tool := mustLoad(t, example(t, "wc"), ToolOptions{Workspace: ws})
	res, err := tool.Run(context.Background(), []byte(`{"path": "notes.txt"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "2 lines, 5 words, 29 bytes in notes.txt", res.Content)
	assert.JSONEq(t, `{"lines": 2, "words": 5, "bytes": 29}`, string(res.Details))
	content, isErr := call(t, tool, `{"path": "../../etc/passwd"}`)
	assert.True(t, isErr)
	assert.Contains(t, content, "cannot open")
}

func TestTool_RunFreshInstance(t *testing.T) {
	tool := testtool(t, "", ToolOptions{})
	for range 3 {
		content, isErr := call(t, tool, `{"mode": "state"}`)
		assert.False(t, isErr)
		assert.Equal(t, "calls: 1\n", content, "a global of the module survived a call")
	}
	content, _ := call(t, tool, `{"mode": "args"}`)
	assert.Equal(t, "testtool\n", content)
}

// Calls of one tool run at once, each with its own stdin and stdout.
func TestTool_RunConcurrent(t *testing.T) {
	// The longest timeout there is, so that a slow machine (interpreted
	// under qemu, loaded) cannot fail the test, only a wrong answer.
	tool := testtool(t, "limits: {timeout: 10m}\n", ToolOptions{})
	const n = 8
	args := func(i int) string { return fmt.Sprintf(`{"mode": "echo", "n": %d}`, i) }
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, err := tool.Run(context.Background(), []byte(args(i)))
			if err != nil {
				results[i] = err.Error()
			} else {
				results[i] = res.Content // an error result says what went wrong
			}
		})
	}
	wg.Wait()
	for i := range n {
		assert.Equal(t, args(i), results[i], "call %d", i)
	}
}

func TestTool_RunJSONOutput(t *testing.T) {
	tool := testtool(t, "", ToolOptions{})
	res, err := tool.Run(context.Background(), []byte(`{"mode": "json"}`))
	require.NoError(t, err)
	assert.Equal(t, "hello from json", res.Content)
	assert.JSONEq(t, `{"answer": 42}`, string(res.Details))
}

func TestTool_RunExitCode(t *testing.T) {
	var logs bytes.Buffer
	tool := testtool(t, "", ToolOptions{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	res, err := tool.Run(context.Background(), []byte(`{"mode": "fail"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "partial output\nsomething went wrong\n[exit code 3]", res.Content)
	assert.JSONEq(t, `3`, mustJSON(t, res.Details, "exit_code"))
	assert.Contains(t, logs.String(), `"stderr":"something went wrong\n"`)
	assert.Contains(t, logs.String(), `"tool":"testtool"`)
}

func TestTool_RunTimeout(t *testing.T) {
	const manifest = "name: loop\ndescription: spins\nlimits: {timeout: 300ms}\n"
	for _, mode := range []string{ModeCompiler, ModeInterpreter} {
		t.Run(mode, func(t *testing.T) {
			if mode == ModeCompiler && !compilerSupported() {
				t.Skip("no compiler on " + goruntime.GOARCH)
			}
			e, err := New(Options{Mode: mode})
			require.NoError(t, err)
			defer e.Close(context.Background())
			tool, err := e.Load(context.Background(), toolDir(t, manifest, loopWasm()), ToolOptions{})
			require.NoError(t, err)
			assert.Equal(t, 300*time.Millisecond, tool.Deadline(nil), "the loop's deadline is the manifest's")
			content, isErr := call(t, tool, `{}`)
			assert.True(t, isErr)
			assert.Equal(t, "[timed out after 300ms (limits.timeout): the tool was stopped]", content)
		})
	}
	t.Run("testtool", func(t *testing.T) { // spins once it has read its args
		tool := testtool(t, "limits: {timeout: 300ms}\n", ToolOptions{})
		content, isErr := call(t, tool, `{"mode": "loop"}`)
		assert.True(t, isErr)
		assert.Contains(t, content, "[timed out after 300ms")
	})
}

func TestTool_RunCancelled(t *testing.T) {
	tool, err := shared.Load(context.Background(), toolDir(t, "name: loop\ndescription: spins\n", loopWasm()), ToolOptions{})
	require.NoError(t, err)
	defer tool.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tool.Run(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestTool_RunMemoryCap(t *testing.T) {
	// The longest timeout there is, so that only the memory cap can stop
	// the call however slow the machine (an interpreter under qemu-arm).
	tool := testtool(t, "limits: {memory_mb: 24, timeout: 10m}\n", ToolOptions{})
	res, err := tool.Run(context.Background(), []byte(`{"mode": "oom"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "[out of memory: the tool may use at most 24 MiB (limits.memory_mb)]")
	// the same module with room to spare still runs
	content, isErr := call(t, tool, `{"mode": "state"}`)
	assert.False(t, isErr, content)
}

func TestTool_RunOutputCap(t *testing.T) {
	tool := testtool(t, "limits: {output_kb: 64}\n", ToolOptions{})
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	res, err := tool.Run(context.Background(), []byte(`{"mode": "flood", "mb": 100}`))
	require.NoError(t, err)
	goruntime.ReadMemStats(&after)
	assert.False(t, res.IsError)
	marker := fmt.Sprintf("[... %d more bytes of output were cut: the limit is 64 KiB (limits.output_kb) ...]", 100<<20-64<<10)
	assert.Equal(t, 64<<10+len(marker), len(res.Content))
	assert.True(t, strings.HasSuffix(res.Content, "x\n"+marker), "no cut marker at the end")
	// Everything the call allocated, garbage included: the 100 MB must
	// have been discarded as it came, not buffered.
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(40<<20), "the call allocated %d MiB", allocated>>20)
}

func TestTool_RunWorkspace(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(ws, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("top secret"), 0o644))

	ro := testtool(t, "workspace: ro\n", ToolOptions{Workspace: ws})
	content, isErr := call(t, ro, `{"mode": "read", "file": "secret.txt"}`)
	assert.False(t, isErr)
	assert.Equal(t, "top secret", content)
	content, isErr = call(t, ro, `{"mode": "write", "file": "secret.txt"}`)
	assert.True(t, isErr)
	assert.Contains(t, content, "write:")
	content, isErr = call(t, ro, `{"mode": "write", "file": "new.txt"}`)
	assert.True(t, isErr, content)
	assert.NoFileExists(t, filepath.Join(ws, "new.txt"))
	data, _ := os.ReadFile(secret)
	assert.Equal(t, "top secret", string(data))

	none := testtool(t, "", ToolOptions{Workspace: ws})
	content, isErr = call(t, none, `{"mode": "read", "file": "secret.txt"}`)
	assert.True(t, isErr)
	assert.NotContains(t, content, "top secret")

	rw := testtool(t, "workspace: rw\n", ToolOptions{Workspace: ws})
	content, isErr = call(t, rw, `{"mode": "write", "file": "new.txt"}`)
	assert.False(t, isErr, content)
	data, _ = os.ReadFile(filepath.Join(ws, "new.txt"))
	assert.Equal(t, "written", string(data))
}

func TestTool_RunEnv(t *testing.T) {
	tool := testtool(t, "env: [GREETING, ABSENT]\n", ToolOptions{Env: map[string]string{"GREETING": "hi", "SECRET": "no"}})
	content, isErr := call(t, tool, `{"mode": "env"}`)
	assert.False(t, isErr)
	assert.Equal(t, "GREETING=hi\n", content)
}

func TestTool_Close(t *testing.T) {
	tool, err := shared.Load(context.Background(), toolDir(t, "name: ok\ndescription: says ok\n", okWasm()), ToolOptions{})
	require.NoError(t, err)
	content, isErr := call(t, tool, "")
	assert.False(t, isErr)
	assert.Equal(t, "ok\n", content)
	require.NoError(t, tool.Close(context.Background()))
	require.NoError(t, tool.Close(context.Background()))
	_, err = tool.Run(context.Background(), nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// mustJSON returns the JSON text of key in the object data.
func mustJSON(t *testing.T, data []byte, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	return string(m[key])
}
