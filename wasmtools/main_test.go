package wasmtools

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// testDir is the package's temporary folder, removed when its tests end.
var testDir string

// shared is one engine for the tests, as in the daemon: loading the same
// module again is a cache hit, which keeps the package's tests quick.
var shared *Engine

func TestMain(m *testing.M) {
	var err error
	if testDir, err = os.MkdirTemp("", "wasmtools-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared, _ = New(Options{CacheDir: filepath.Join(testDir, "cache")})
	code := m.Run()
	_ = shared.Close(context.Background())
	_ = os.RemoveAll(testDir)
	os.Exit(code)
}

// examples are the shipped example tools built from Go for wasip1, by the
// first test that needs one: only the tests of the examples' own logic
// and the benchmarks do. A Go module is 3.5 MB that wazero takes tens of
// seconds to compile under -race, so the host's tests run wattest's
// testtool instead.
var examples struct {
	once  sync.Once
	paths map[string]string // calc, jsonq, wc
	err   error             // why they could not be built
}

// goTool finds the go command that runs these tests.
func goTool() (string, error) {
	p := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return exec.LookPath("go")
}

// buildExamples builds the examples for wasip1 with one go build, so the
// packages compile in parallel.
func buildExamples(dir string) (map[string]string, error) {
	gobin, err := goTool()
	if err != nil {
		return nil, fmt.Errorf("no Go toolchain to build the example modules: %w", err)
	}
	out := filepath.Join(dir, "bin")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-o", out+string(filepath.Separator),
		"./examples/calc", "./examples/jsonq", "./examples/wc")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build for wasip1: %v: %s", err, stderr.String())
	}
	paths := map[string]string{}
	for _, name := range []string{"calc", "jsonq", "wc"} {
		paths[name] = filepath.Join(out, name)
	}
	return paths, nil
}

// exampleModule is the path of an example's Go-built module; the test
// skips when the examples cannot be built.
func exampleModule(tb testing.TB, name string) string {
	tb.Helper()
	examples.once.Do(func() { examples.paths, examples.err = buildExamples(testDir) })
	if examples.err != nil {
		tb.Skip(examples.err)
	}
	return examples.paths[name]
}

// toolDir writes manifest as tool.yaml into a new folder together with
// the module (a link to a built one, or bytes) and returns the manifest's
// path.
func toolDir(tb testing.TB, manifest string, module any) string {
	tb.Helper()
	dir := tb.TempDir()
	dst := filepath.Join(dir, "tool.wasm")
	switch mod := module.(type) {
	case string:
		require.NoError(tb, os.Symlink(mod, dst))
	case []byte:
		require.NoError(tb, os.WriteFile(dst, mod, 0o644))
	}
	p := filepath.Join(dir, ManifestName)
	require.NoError(tb, os.WriteFile(p, []byte(manifest), 0o644))
	return p
}

// example returns the path of an example's tool.yaml, with its module
// linked beside it in a temporary copy of the folder.
func example(tb testing.TB, name string) string {
	tb.Helper()
	module := exampleModule(tb, name)
	data, err := os.ReadFile(filepath.Join("examples", name, ManifestName))
	require.NoError(tb, err)
	return toolDir(tb, slowMachine(tb, string(data)), module)
}

// slowMachine raises a manifest's timeout (5 s for calc), meant for a
// board that runs the module natively, to the longest there is:
// interpreted under qemu on a loaded machine, a Go module can take longer
// just to start, and the tests that use it are not about the timeout.
func slowMachine(tb testing.TB, manifest string) string {
	tb.Helper()
	timeout := regexp.MustCompile(`(?m)^  timeout: .*$`)
	require.Regexp(tb, timeout, manifest)
	return timeout.ReplaceAllString(manifest, "  timeout: 10m")
}

// mustLoad loads a tool on the shared engine and closes it at the end.
func mustLoad(tb testing.TB, manifestPath string, opts ToolOptions) *Tool {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	tool, err := shared.Load(context.Background(), manifestPath, opts)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = tool.Close(context.Background()) })
	return tool
}
