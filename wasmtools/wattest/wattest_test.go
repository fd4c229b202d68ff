package wattest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestModule(t *testing.T) {
	wasm := Testtool(t)
	assert.True(t, bytes.HasPrefix(wasm, []byte("\x00asm\x01\x00\x00\x00")), "not a binary module")
	assert.Less(t, len(wasm), 16<<10, "a few KB, not a Go runtime")
	again := Module(t, "testtool")
	assert.Same(t, &wasm[0], &again[0], "compiled once per test binary")
}

func TestCompile(t *testing.T) {
	wasm := Compile(t, []byte(`(module (memory (export "memory") 1))`))
	assert.True(t, bytes.HasPrefix(wasm, []byte("\x00asm")))

	var r recorder
	r.run(t, func(tb testing.TB) { Compile(tb, []byte("(module (func $f (i32.add)))")) })
	assert.Contains(t, r.failed, "wat2wasm failed")
	r = recorder{}
	r.run(t, func(tb testing.TB) { Module(tb, "nope") })
	assert.Equal(t, "nope.wat: wattest has no module nope.wat", r.failed)
}

// Without wat2wasm a test skips, with the command that installs it; under
// CI it fails with the same sentence.
func TestNeed_Missing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for ci, want := range map[string]string{"": "skipped", "false": "skipped", "true": "failed"} {
		t.Setenv("CI", ci)
		var r recorder
		r.run(t, func(tb testing.TB) { Testtool(tb) })
		if want == "skipped" {
			assert.Equal(t, Missing, r.skipped, "CI=%q", ci)
			assert.Empty(t, r.failed)
		} else {
			assert.Equal(t, Missing, r.failed, "CI=%q", ci)
			assert.Empty(t, r.skipped)
		}
	}
}

// recorder is a testing.TB that records a skip or a failure instead of
// ending the test it runs in.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()          {}
func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...); r.stop() }
func (r *recorder) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	r.stop()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	r.stop()
}

// stop ends fn as Skip and Fatal end a test, by a panic run catches.
func (r *recorder) stop() { panic(r) }

// run calls fn with r, which must then skip or fail.
func (r *recorder) run(t *testing.T, fn func(testing.TB)) {
	t.Helper()
	r.TB = t
	defer func() {
		p := recover()
		require.Equal(t, r, p, "fn neither skipped nor failed")
	}()
	fn(r)
	t.Fatal("fn returned without skipping or failing")
}
