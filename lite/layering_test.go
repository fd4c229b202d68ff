package lite_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/agnx-lite/agnx-lite"

// liteLayers are the packages of lite from the bottom up, each with the
// packages of lite it may import: only packages of an earlier row (the
// test checks that every edge points down). The root, lite, is the
// composition root above them all: it may import any of them, and none
// may import it. docs/internals/architecture.md draws the same layers; a
// new package of lite gets a row at the height of what it imports, and
// an edge is added only when it points down.
var liteLayers = []struct {
	pkg     string
	imports []string
}{
	// Leaves: they import no package of lite.
	{"lite/hooks/tmpl", nil},
	{"lite/webaddr", nil},
	{"lite/workers", nil},
	{"lite/inbox", nil},
	{"lite/mcp", nil},
	{"lite/bgproc", nil},
	{"lite/systemd", nil},
	{"lite/webui", nil},
	{"lite/webui/e2e", nil},
	{"lite/agnxcompat", nil},
	{"lite/telegram/tgtest", nil},
	{"lite/plugin/example", nil},

	// config is agnx.yaml as plain data: below every subsystem, so it
	// imports only leaves.
	{"lite/config", []string{"lite/hooks/tmpl", "lite/webaddr", "lite/workers"}},

	// Gateways: they declare what they need of the daemon as interfaces.
	{"lite/httpapi", []string{"lite/webaddr"}},
	{"lite/telegram", []string{"lite/inbox"}},
	{"lite/plugin", []string{"lite/inbox"}},
	{"lite/acpserver", []string{"lite/httpapi"}},

	// Subsystems: each takes config and what lies below it at
	// construction, and declares what it needs of the root as interfaces.
	// chats names Telegram's chats by its gateway's name.
	{"lite/chats", []string{"lite/config", "lite/inbox", "lite/telegram"}},
	{"lite/notify", []string{"lite/config"}},
	// upkeep (the memory guard, retention) reads the sessions' defaults.
	{"lite/upkeep", []string{"lite/config"}},
	{"lite/sandbox", []string{"lite/bgproc", "lite/config", "lite/mcp", "lite/workers"}},
	// toolset, the tool factory, runs its tools in sandbox's sandboxes and
	// drives the MCP, background-process and worker clients.
	{"lite/toolset", []string{"lite/bgproc", "lite/config", "lite/mcp", "lite/sandbox", "lite/workers"}},
	// agentcache builds agents on first use: their tools come from
	// toolset, the sandbox manager of a cache outside a daemon from
	// sandbox. cachetest is its tests' fixtures, shared with the root's.
	{"lite/agentcache", []string{"lite/config", "lite/sandbox", "lite/toolset"}},
	{"lite/agentcache/cachetest", []string{"lite/config", "lite/toolset"}},
	// autonomy (schedules, task boards, heartbeats) finds a chat's session
	// through lite/chats and hands what heartbeats say to lite/notify.
	{"lite/autonomy", []string{"lite/chats", "lite/config", "lite/notify"}},
	// hooks implements httpapi.Hooks, whose receipt and error types it
	// returns.
	{"lite/hooks", []string{"lite/config", "lite/hooks/tmpl", "lite/httpapi"}},
	// doctor reads what the subsystems read (the MCP entries through
	// toolset, the sandbox's probe) and gives httpapi its health report.
	{"lite/doctor", []string{"lite/config", "lite/httpapi", "lite/mcp", "lite/sandbox", "lite/toolset"}},
}

// TestLiteLayers_PointDown holds the table itself to its rule: every
// package has one row, and every edge points to an earlier row.
func TestLiteLayers_PointDown(t *testing.T) {
	row := map[string]int{}
	for i, l := range liteLayers {
		_, dup := row[l.pkg]
		require.False(t, dup, "%s has two rows in liteLayers", l.pkg)
		row[l.pkg] = i
	}
	for i, l := range liteLayers {
		for _, imp := range l.imports {
			j, ok := row[imp]
			assert.True(t, ok && j < i, "%s may import %s in liteLayers, but that row is not below it: move a row, never an edge upward", l.pkg, imp)
		}
	}
}

// liteEdges is liteLayers as a map: a package's allowed imports.
func liteEdges() map[string][]string {
	m := make(map[string][]string, len(liteLayers))
	for _, l := range liteLayers {
		m[l.pkg] = l.imports
	}
	return m
}

// below are the folders under lite in the layers: the domain and the
// leaves never import lite or any package of it.
var below = []string{"agents", "bwrap", "runtime", "storage", "wasmtools"}

// TestLiteImportsDownward holds the packages to the layers: a package of
// lite imports only the siblings liteLayers gives it, only cmd imports the
// root package lite, and what lies below lite imports nothing of it.
// Test files are left out: a test may drive a package through the root.
func TestLiteImportsDownward(t *testing.T) {
	pkgs := moduleImports(t, "..")
	edges := liteEdges()
	var lites []string
	for dir, imports := range pkgs {
		if strings.HasPrefix(dir, "lite/") {
			lites = append(lites, dir)
		}
		for _, imp := range imports {
			switch {
			case imp == "lite":
				assert.True(t, strings.HasPrefix(dir, "cmd/"),
					"%s imports the root package lite: only cmd may, the composition root is above everything else", dir)
			case !strings.HasPrefix(imp, "lite/"):
			case dir == "lite" || strings.HasPrefix(dir, "cmd/"):
			case strings.HasPrefix(dir, "lite/"):
				assert.Contains(t, edges[dir], imp,
					"%s imports %s, an edge liteLayers does not allow: a package of lite imports only siblings below it", dir, imp)
			default:
				for _, b := range below {
					assert.False(t, dir == b || strings.HasPrefix(dir, b+"/"),
						"%s imports %s: the layers below lite never import it", dir, imp)
				}
			}
		}
	}
	assert.ElementsMatch(t, slices.Sorted(maps.Keys(edges)), lites,
		"every package of lite has a row in liteLayers, and every row a package")
}

// moduleImports returns, for each package folder of the module under root
// (relative to it, with / separators), the packages of the module its
// non-test files import, as folders too ("lite/config").
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		if _, ok := pkgs[dir]; !ok {
			pkgs[dir] = nil
		}
		for _, imp := range fileImports(t, path) {
			if own, ok := strings.CutPrefix(imp, modulePath+"/"); ok && !slices.Contains(pkgs[dir], own) {
				pkgs[dir] = append(pkgs[dir], own)
			} else if imp == modulePath {
				t.Errorf("%s imports the module root, which is no package", path)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return pkgs
}

// fileImports returns the import paths of one Go file.
func fileImports(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	require.NoError(t, err)
	var out []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		out = append(out, p)
	}
	return out
}

// dirImports calls fn with each import of each non-test Go file in dir.
func dirImports(t *testing.T, dir string, fn func(file, path string)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, dir)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, path := range fileImports(t, f) {
			fn(f, path)
		}
	}
}

// Gateways reach sessions through the loop's API only (Follow, Events,
// Session, KV): none of them imports the store.
func TestGatewaysImportNoStorage(t *testing.T) {
	for _, dir := range []string{"httpapi", "telegram", "plugin"} {
		dirImports(t, dir, func(f, path string) {
			assert.NotEqual(t, modulePath+"/storage", path, "%s imports the store; use the runtime.Loop's API", f)
		})
	}
}

// The leaves every layer imports (the JSON writer, the SSE wire format)
// take nothing but the standard library: importing them never pulls a
// layer in, so runtime/llm, the gateways, cmd and bench can share them.
// So does the webhook template language, which both config and the hooks
// use.
func TestLeavesImportStdlibOnly(t *testing.T) {
	for _, dir := range []string{"../runtime/jsonw", "../runtime/sse", "hooks/tmpl"} {
		dirImports(t, dir, func(f, path string) {
			first, _, _ := strings.Cut(path, "/")
			assert.NotContains(t, first, ".", "%s imports %s; a leaf imports the standard library only", f, path)
		})
	}
}

// imports lists the module's packages that the non-test files of dir
// import.
func imports(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	dirImports(t, dir, func(f, path string) {
		if rest, ok := strings.CutPrefix(path, module+"/"); ok {
			out[rest] = f
		}
	})
	return out
}

const module = "github.com/agnx-lite/agnx-lite"

// storage imports nothing of the module's above it: the memory guard
// drops the database's mapped pages itself (lite/upkeep/memtrim.go),
// storage only holds the mapping in place (Store.Mapped). The leaves that
// read the process and the machine (runtime/hostfacts, runtime/pages)
// import nothing of the module, so that anything may use them.
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
