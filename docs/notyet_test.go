package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// notYetRE finds a sentence saying something is missing from this
	// build: "not in this build yet", "**Not yet:**".
	notYetRE = regexp.MustCompile(`(?i)\bnot (?:in this build|yet)\b|\bnot built\b`)
	// codeWordRE is a name in a code span: `schedule`, `completions`.
	codeWordRE = regexp.MustCompile("`([a-z][a-z0-9_]*)`")
)

// Nothing the code builds is called missing: the README said the
// schedule and background_process tools were "not in this build yet" long
// after they were, and listed completions among what was "not yet" after
// the command shipped. The built-in tools are read from lite/toolset/toolset.go's
// builtins, the commands from cmd/agnx-lite/main.go's commands().
func TestNotYet_NamesNothingBuilt(t *testing.T) {
	built := map[string]string{}
	for _, name := range mapKeysReturned(t, "cmd/agnx-lite/main.go", "commands") {
		built[name] = "a command (cmd/agnx-lite/main.go)"
	}
	for _, name := range stringSliceVar(t, "lite/toolset/toolset.go", "builtins") {
		built[name] = "a built-in tool (lite/toolset/toolset.go)"
	}
	require.Contains(t, built, "schedule")
	require.Contains(t, built, "background_process")
	require.Contains(t, built, "completions")
	checked := 0
	for _, f := range markdownFiles(t) {
		for _, s := range mdStatements(f, readFile(t, f)) {
			if !notYetRE.MatchString(s.text) {
				continue
			}
			checked++
			for _, m := range codeWordRE.FindAllStringSubmatch(s.text, -1) {
				what, ok := built[m[1]]
				assert.False(t, ok, "%s:%d says `%s` is not built yet, but it is %s:\n\t%s", s.file, s.line, m[1], what, s.text)
			}
		}
	}
	assert.Positive(t, checked, "the manual says nowhere what is not there yet (Agnx compatibility does): the scan is broken")
}

// stringSliceVar returns the strings of `var name = []string{...}` in a
// Go file of the repository.
func stringSliceVar(t *testing.T, file, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, readFile(t, file), parser.SkipObjectResolution)
	require.NoError(t, err)
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name == name && i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.CompositeLit); ok {
						return stringElts(t, lit.Elts, false)
					}
				}
			}
		}
	}
	require.Failf(t, "no var", "%s has no var %s = []string{...} any more: update docs/notyet_test.go", file, name)
	return nil
}

// mapKeysReturned returns the string keys of the map literal that func
// name of a Go file returns.
func mapKeysReturned(t *testing.T, file, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, readFile(t, file), parser.SkipObjectResolution)
	require.NoError(t, err)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || fd.Body == nil {
			continue
		}
		for _, st := range fd.Body.List {
			if ret, ok := st.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
				if lit, ok := ret.Results[0].(*ast.CompositeLit); ok {
					return stringElts(t, lit.Elts, true)
				}
			}
		}
	}
	require.Failf(t, "no func", "%s has no func %s returning a map literal any more: update docs/notyet_test.go", file, name)
	return nil
}

// stringElts returns the string literals of a composite literal's
// elements, or of their keys.
func stringElts(t *testing.T, elts []ast.Expr, keys bool) []string {
	t.Helper()
	var out []string
	for _, e := range elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok && keys {
			e = kv.Key
		}
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			continue
		}
		s, err := strconv.Unquote(lit.Value)
		require.NoError(t, err)
		out = append(out, s)
	}
	require.NotEmpty(t, out)
	return out
}
