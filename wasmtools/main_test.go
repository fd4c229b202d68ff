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
	"testing"

	"github.com/stretchr/testify/require"
)

// modules holds the Go-built test modules by name (calc, jsonq, wc,
// testtool), built once by TestMain.
var modules = map[string]string{}

// buildErr says why the Go modules could not be built; tests that need
// them skip with it.
var buildErr error

// shared is one engine for the tests, as in the daemon: loading the same
// module again is a cache hit, which keeps the package's tests quick.
var shared *Engine

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmtools-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildErr = buildModules(dir)
	shared, _ = New(Options{CacheDir: filepath.Join(dir, "cache")})
	code := m.Run()
	_ = shared.Close(context.Background())
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// goTool finds the go command that runs these tests.
func goTool() (string, error) {
	p := filepath.Join(goruntime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return exec.LookPath("go")
}

// buildModules builds the examples and testdata/testtool for wasip1 with
// one go build, so the packages compile in parallel.
func buildModules(dir string) error {
	gobin, err := goTool()
	if err != nil {
		return fmt.Errorf("no Go toolchain to build the test modules: %w", err)
	}
	out := filepath.Join(dir, "bin")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(gobin, "build", "-trimpath", "-o", out+string(filepath.Separator),
		"./examples/calc", "./examples/jsonq", "./examples/wc", "./testdata/testtool")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for wasip1: %v: %s", err, stderr.String())
	}
	for _, name := range []string{"calc", "jsonq", "wc", "testtool"} {
		modules[name] = filepath.Join(out, name)
	}
	return nil
}

// needModules skips a test when the Go modules could not be built.
func needModules(tb testing.TB) {
	tb.Helper()
	if buildErr != nil {
		tb.Skip(buildErr)
	}
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
	needModules(tb)
	data, err := os.ReadFile(filepath.Join("examples", name, ManifestName))
	require.NoError(tb, err)
	return toolDir(tb, slowMachine(tb, string(data)), modules[name])
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
