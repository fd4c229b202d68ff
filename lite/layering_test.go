package lite_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Gateways reach sessions through the loop's API only (Follow, Events,
// Session, KV): none of them imports the store.
func TestGatewaysImportNoStorage(t *testing.T) {
	for _, dir := range []string{"httpapi", "telegram", "plugin"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				assert.NotEqual(t, "github.com/agnx-lite/agnx-lite/storage", path, "%s imports the store; use the runtime.Loop's API", f)
			}
		}
	}
}

// The leaves every layer imports (the JSON writer, the SSE wire format)
// take nothing but the standard library: importing them never pulls a
// layer in, so runtime/llm, the gateways, cmd and bench can share them.
func TestLeavesImportStdlibOnly(t *testing.T) {
	for _, dir := range []string{"../runtime/jsonw", "../runtime/sse"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(path, "/")
				assert.NotContains(t, first, ".", "%s imports %s; a leaf imports the standard library only", f, path)
			}
		}
	}
}

// imports lists the module's packages that the non-test files of dir
// import.
func imports(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, dir)
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(path, module+"/"); ok {
				out[rest] = f
			}
		}
	}
	return out
}

const module = "github.com/agnx-lite/agnx-lite"

// storage imports nothing of the module's above it: the memory guard
// drops the database's mapped pages itself (lite/memtrim.go), storage
// only holds the mapping in place (Store.Mapped). The leaves that read
// the process and the machine (runtime/hostfacts, runtime/pages) import
// nothing of the module, so that anything may use them.
func TestLowerPackagesImportNothingAbove(t *testing.T) {
	for dir, may := range map[string][]string{
		"../storage":           nil,
		"../runtime/hostfacts": nil,
		"../runtime/pages":     nil,
	} {
		for imp, f := range imports(t, dir) {
			assert.Contains(t, may, imp, "%s imports %s", f, imp)
		}
	}
}
