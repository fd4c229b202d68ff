package wattest

import (
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

//go:embed *.wat
var sources embed.FS

// Missing is the sentence a test skips or fails with when wat2wasm is not
// installed.
const Missing = `wat2wasm is missing: install it with "sudo apt-get install wabt"`

// built holds each module compiled so far: the sources are embedded, so
// one compile serves the whole test binary.
var built sync.Map // name → *module

type module struct {
	once sync.Once
	wasm []byte
	err  error
}

// Testtool is testtool.wat compiled: see that file for its modes.
func Testtool(tb testing.TB) []byte {
	tb.Helper()
	return Module(tb, "testtool")
}

// Module is the embedded name.wat compiled to a binary module, once per
// test binary. Without wat2wasm the test skips, or fails under CI=true.
func Module(tb testing.TB, name string) []byte {
	tb.Helper()
	tool := need(tb)
	v, _ := built.LoadOrStore(name, &module{})
	m := v.(*module)
	m.once.Do(func() {
		src, err := sources.ReadFile(name + ".wat")
		if err != nil {
			m.err = fmt.Errorf("wattest has no module %s.wat", name)
			return
		}
		m.wasm, m.err = compile(tool, src)
	})
	if m.err != nil {
		tb.Fatalf("%s.wat: %v", name, m.err)
	}
	return m.wasm
}

// Compile compiles src, WebAssembly text, to a binary module. Without
// wat2wasm the test skips, or fails under CI=true.
func Compile(tb testing.TB, src []byte) []byte {
	tb.Helper()
	wasm, err := compile(need(tb), src)
	if err != nil {
		tb.Fatal(err)
	}
	return wasm
}

// need is the path of wat2wasm; without it the test skips, or fails
// where CI is "true": a CI run must not pass by skipping what it tests.
func need(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("wat2wasm")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal(Missing)
	}
	tb.Skip(Missing)
	return ""
}

// compile runs wat2wasm on src in a temporary folder: reading a file and
// writing one works with every wabt release, where "-" for stdin and
// stdout does only with recent ones.
func compile(wat2wasm string, src []byte) ([]byte, error) {
	dir, err := os.MkdirTemp("", "wattest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		return nil, err
	}
	if msg, err := exec.Command(wat2wasm, in, "-o", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wat2wasm failed (%v): %s", err, msg)
	}
	return os.ReadFile(out)
}
