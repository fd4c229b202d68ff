package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file reads the module's source with go/parser for
// docs/reference/configuration.md: the yaml-tagged structs that decode a
// file, walked from their root type into one row per key with its type
// and the doc comment of its field.

const modulePath = "github.com/agnx-lite/agnx-lite"

// goSource holds the parsed packages of the module, by folder relative to
// its root ("lite/config", "agents").
type goSource struct {
	t    *testing.T
	root string
	fset *token.FileSet
	pkgs map[string]*goPkg
	// expanded are the struct types walked so far, by the path of their
	// first key; refer are those that a walk names by that path instead
	// of listing their keys again (agnx.yaml's mcp.servers are entries
	// of agent.yaml's spec.tools).
	expanded, refer map[*goType]string
}

// goPkg is one package's type declarations.
type goPkg struct {
	dir   string
	files []*ast.File
	types map[string]*goType
	// unmarshal are the types with an UnmarshalYAML method: they read a
	// value of their own shape, so their fields are not keys.
	unmarshal map[string]bool
}

// goType is one type declaration with its doc comment and the imports of
// its file (to resolve pkg.Type).
type goType struct {
	pkg     *goPkg
	name    string
	spec    *ast.TypeSpec
	doc     string
	imports map[string]string // package name → folder
}

func newGoSource(t *testing.T, root string) *goSource {
	return &goSource{t: t, root: root, fset: token.NewFileSet(), pkgs: map[string]*goPkg{},
		expanded: map[*goType]string{}, refer: map[*goType]string{}}
}

// pkg parses the package in dir (relative to the module root) once.
func (s *goSource) pkg(dir string) *goPkg {
	if p, ok := s.pkgs[dir]; ok {
		return p
	}
	p := &goPkg{dir: dir, types: map[string]*goType{}, unmarshal: map[string]bool{}}
	files, err := filepath.Glob(filepath.Join(s.root, dir, "*.go"))
	require.NoError(s.t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, name, nil, parser.ParseComments)
		require.NoError(s.t, err)
		p.files = append(p.files, f)
		imports := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(path, modulePath+"/")
			if !ok {
				continue
			}
			imports[filepath.Base(rel)] = rel
			if imp.Name != nil {
				imports[imp.Name.Name] = rel
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					ts, ok := sp.(*ast.TypeSpec)
					if !ok {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(d.Specs) == 1 {
						doc = d.Doc
					}
					p.types[ts.Name.Name] = &goType{pkg: p, name: ts.Name.Name, spec: ts, doc: doc.Text(), imports: imports}
				}
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "UnmarshalYAML" {
					p.unmarshal[recvName(d.Recv.List[0].Type)] = true
				}
			}
		}
	}
	s.pkgs[dir] = p
	return p
}

func recvName(x ast.Expr) string {
	if st, ok := x.(*ast.StarExpr); ok {
		x = st.X
	}
	return x.(*ast.Ident).Name
}

// lookup finds the type named name in dir.
func (s *goSource) lookup(dir, name string) *goType {
	gt := s.pkg(dir).types[name]
	require.NotNil(s.t, gt, "type %s not found in %s", name, dir)
	return gt
}

// resolve finds the module type x names in the file of in, or nil for a
// type from outside the module or a predeclared one.
func (s *goSource) resolve(in *goType, x ast.Expr) *goType {
	switch x := x.(type) {
	case *ast.Ident:
		if gt, ok := in.pkg.types[x.Name]; ok {
			return gt
		}
	case *ast.SelectorExpr:
		if dir, ok := in.imports[x.X.(*ast.Ident).Name]; ok {
			return s.lookup(dir, x.Sel.Name)
		}
	}
	return nil
}

// keyRow is one key of a file: its path (a.b, a[].b for a list's
// elements, a.<name>.b for a map's), its type as a reader would name it,
// its description, and whether it holds an object of keys below it.
type keyRow struct {
	path, kind, doc string
	object          bool
	// see is the key whose entries have the same keys as this one's,
	// listed there.
	see string
}

// yamlKey is the key a struct field decodes: "" for one that is not a key,
// and inline for one whose fields are the struct's own keys.
func yamlKey(f *ast.Field) (key string, inline bool) {
	if len(f.Names) == 1 && !f.Names[0].IsExported() {
		return "", false
	}
	tag := ""
	if f.Tag != nil {
		s, _ := strconv.Unquote(f.Tag.Value)
		tag = reflect.StructTag(s).Get("yaml")
	}
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(opts, "inline") {
		return "", true
	}
	return name, false
}

// walk returns a row for every key of struct type gt, below prefix, each
// followed by the rows of the keys below it.
func (s *goSource) walk(gt *goType, prefix string) []keyRow {
	st, ok := gt.spec.Type.(*ast.StructType)
	require.True(s.t, ok, "%s is not a struct", gt.name)
	var rows []keyRow
	var last struct{ doc, path string } // the last documented field
	for _, f := range st.Fields.List {
		key, inline := yamlKey(f)
		if inline {
			rows = append(rows, s.walk(s.resolve(gt, f.Type), prefix)...)
			continue
		}
		if key == "" || key == "-" {
			continue
		}
		require.Len(s.t, f.Names, 1, "%s: one field per yaml key", gt.name)
		row := keyRow{path: prefix + key}
		switch doc := strings.TrimSpace(f.Doc.Text() + " " + f.Comment.Text()); {
		case doc != "":
			last.doc, last.path = doc, row.path
			row.doc = s.keyify(gt, doc)
		case regexp.MustCompile(`\b` + f.Names[0].Name + `(\.?[^.\w]|$)`).MatchString(last.doc):
			// One comment speaks for the fields it names below it.
			row.doc = "See `" + last.path + "`."
		}
		var below []keyRow
		row.kind, below = s.fieldType(gt, f.Type, &row)
		rows = append(append(rows, row), below...)
	}
	return rows
}

// fieldType names the type of row's key and returns the rows of the keys
// below it; an object's description is its type's doc when its field has
// none.
func (s *goSource) fieldType(in *goType, x ast.Expr, row *keyRow) (string, []keyRow) {
	switch x := x.(type) {
	case *ast.StarExpr:
		return s.fieldType(in, x.X, row)
	case *ast.ArrayType:
		elem := &keyRow{path: row.path + "[]"}
		kind, below := s.fieldType(in, x.Elt, elem)
		row.object, row.see = elem.object, elem.see
		if row.doc == "" {
			row.doc = elem.doc
		}
		return "list of " + plural(kind), below
	case *ast.MapType:
		elem := &keyRow{path: row.path + ".<name>"}
		kind, below := s.fieldType(in, x.Value, elem)
		row.object, row.see = elem.object, elem.see
		if row.doc == "" {
			row.doc = elem.doc
		}
		if kind == "object" {
			return "map of objects, by name", below
		}
		return "map of string to " + kind, below
	case *ast.InterfaceType:
		return "any", nil
	}
	gt := s.resolve(in, x)
	if gt == nil {
		kind := basicKind(x)
		require.NotEmpty(s.t, kind, "%s: name the type of its key in basicKind", row.path)
		return kind, nil
	}
	if gt.pkg.unmarshal[gt.name] {
		// It reads a value of its own shape: one of its fields' shapes.
		var kinds []string
		for _, f := range gt.spec.Type.(*ast.StructType).Fields.List {
			k, _ := s.fieldType(gt, f.Type, &keyRow{})
			kinds = append(kinds, k)
		}
		return strings.Join(kinds, " or "), nil
	}
	if _, ok := gt.spec.Type.(*ast.StructType); !ok {
		return s.fieldType(gt, gt.spec.Type, row)
	}
	if at, ok := s.refer[gt]; ok {
		row.see = strings.TrimSuffix(at, "[]")
		return "object", nil
	}
	if _, ok := s.expanded[gt]; !ok {
		s.expanded[gt] = row.path
	}
	row.object = true
	if row.doc == "" && gt.doc != "" {
		// "Tasks is the tasks: section" names the key, not the type.
		key := strings.TrimSuffix(strings.TrimSuffix(row.path, "[]"), ".<name>")
		row.doc = s.keyify(gt, strings.Replace(gt.doc, gt.name, "`"+key+"`", 1))
	}
	return "object", s.walk(gt, row.path+".")
}

// basicKind names a predeclared type as YAML readers know it; "" for
// another.
func basicKind(x ast.Expr) string {
	switch fmt.Sprint(x) {
	case "string":
		return "string"
	case "int", "int64":
		return "integer"
	case "bool":
		return "boolean"
	case "float64":
		return "number"
	case "any":
		return "any"
	}
	return ""
}

// plural is the kind of a list's entries: strings, (list of strings).
func plural(kind string) string {
	if strings.Contains(kind, " ") {
		return "(" + kind + ")"
	}
	return kind + "s"
}

// goChain matches a Go field name, or a chain of them (Target.Session).
var goChain = regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)*\b`)

// goFile matches a reference to a Go file, "(hooks.go)" or
// "(lite/upkeep/retention.go)".
var goFile = regexp.MustCompile(`\s*\([a-z0-9_/]+\.go\)`)

// keyify writes the Go names of gt's fields in doc as the keys they
// decode (Target.Session as `target.session`), so that a comment written
// for Go readers names what a user writes, and drops references to Go
// files. Only a name's first mention is a key: a comment names its field
// first, and a later Discord may be the platform.
func (s *goSource) keyify(gt *goType, doc string) string {
	doc = goFile.ReplaceAllString(doc, "")
	seen := map[string]bool{}
	return goChain.ReplaceAllStringFunc(doc, func(chain string) string {
		if seen[chain] {
			return chain
		}
		seen[chain] = true
		var keys []string
		cur := gt
		for _, name := range strings.Split(chain, ".") {
			if cur == nil {
				return chain
			}
			f := fieldNamed(cur, name)
			if f == nil {
				return chain
			}
			key, _ := yamlKey(f)
			if key == "" || key == "-" {
				return chain
			}
			keys = append(keys, key)
			x := f.Type
			for {
				switch y := x.(type) {
				case *ast.StarExpr:
					x = y.X
					continue
				case *ast.ArrayType:
					x = y.Elt
					continue
				}
				break
			}
			cur = s.resolve(cur, x)
		}
		return "`" + strings.Join(keys, ".") + "`"
	})
}

// fieldNamed is gt's field called name, nil when it has none.
func fieldNamed(gt *goType, name string) *ast.Field {
	st, ok := gt.spec.Type.(*ast.StructType)
	if !ok {
		return nil
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name == name {
				return f
			}
		}
	}
	return nil
}
