package agents

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Doc is one parsed YAML document that remembers where every key is, so
// that checks made after decoding can still point at a line.
type Doc struct {
	// File names the document in errors.
	File string
	// Unknown holds, after Decode, one entry per key the target type does
	// not have (agent.yaml:7: unknown field "flavour" in spec.model). Agnx
	// ignores unknown keys in every file it reads, so Decode does too;
	// doctor and validate show them as warnings.
	Unknown []*Error
	root    ast.Node // nil for an empty document
}

// ParseYAML parses data, which must hold at most one YAML document. A
// syntax error comes back as a one-line *Error.
func ParseYAML(file string, data []byte) (doc *Doc, err error) {
	defer recoverAs(file, &err)
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, YAMLError(file, err)
	}
	doc = &Doc{File: file}
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if doc.root != nil {
			return nil, &Error{File: file, Line: nodeLine(d.Body), Msg: "only one YAML document is allowed"}
		}
		doc.root = d.Body
	}
	return doc, nil
}

// recoverAs turns a panic inside the YAML library into an error: a
// malformed file must never take the daemon down.
func recoverAs(file string, err *error) {
	if r := recover(); r != nil {
		*err = &Error{File: file, Msg: fmt.Sprintf("cannot parse YAML (%v)", r)}
	}
}

// Empty reports whether the document holds nothing but comments.
func (d *Doc) Empty() bool { return d == nil || d.root == nil }

// Decode stores the document in v, a pointer to a yaml-tagged struct whose
// fields may hold defaults: keys absent from the document keep them. A
// value of the wrong kind is an *Error at its line; an unknown key is
// skipped and noted in d.Unknown.
func (d *Doc) Decode(v any) (err error) {
	if d.Empty() {
		return nil
	}
	defer recoverAs(d.File, &err)
	d.Unknown = d.Unknown[:0]
	if err := d.check(d.root, reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	return YAMLError(d.File, yaml.NodeToValue(d.root, v))
}

// Warnings returns the sentences for d's unknown keys.
func Warnings(d *Doc) []string {
	var out []string
	for _, e := range d.Unknown {
		out = append(out, e.Error()+" (ignored)")
	}
	return out
}

// Explain adds to err, a problem found after decoding, the first key that
// was ignored as unknown: a required key reported missing is often that
// key misspelt ("modle").
func (d *Doc) Explain(err error) error {
	e, ok := err.(*Error)
	if !ok || d == nil || len(d.Unknown) == 0 {
		return err
	}
	u := d.Unknown[0]
	return &Error{File: e.File, Line: e.Line, Msg: e.Msg + "; line " + strconv.Itoa(u.Line) + " has an " + u.Msg + ", which was ignored"}
}

// Strict returns the first unknown key as an *Error, for the files of
// agnx-lite's own formats that have no parent to stay compatible with.
func (d *Doc) Strict() error {
	if len(d.Unknown) == 0 {
		return nil
	}
	return d.Unknown[0]
}

// Line returns the line of the key at path, written like
// "spec.tools[2].name". When the path goes further than the document, it
// returns the line of the deepest part that exists (so "metadata.name"
// points at "metadata:" when name is missing), and 0 for an empty document.
func (d *Doc) Line(path string) int {
	if d.Empty() {
		return 0
	}
	n, line := d.root, nodeLine(d.root)
	for path != "" && n != nil {
		var key string
		idx := -1
		switch {
		case path[0] == '.':
			path = path[1:]
			continue
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return line
			}
			idx, _ = strconv.Atoi(path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key, path = path[:end], path[end:]
		}
		var keyLine int
		n, keyLine = child(unwrap(n), key, idx)
		if n == nil && keyLine == 0 {
			return line
		}
		line = keyLine
	}
	return line
}

// Has reports whether the key at path (written as for Line) is in the
// document, whatever its value, null included: a key whose ${VAR} expanded
// to nothing is there, one never written is not.
func (d *Doc) Has(path string) bool {
	if d.Empty() || path == "" {
		return false
	}
	n := d.root
	for _, key := range strings.Split(path, ".") {
		var line int
		if n, line = child(unwrap(n), key, -1); line == 0 && n == nil {
			return false
		}
	}
	return true
}

// Errorf returns an *Error at the line of path.
func (d *Doc) Errorf(path, format string, args ...any) error {
	e := &Error{Line: d.Line(path), Msg: fmt.Sprintf(format, args...)}
	if d != nil {
		e.File = d.File
	}
	return e
}

// child finds key (or index idx when key is "") below n and returns the
// value and the line of its key.
func child(n ast.Node, key string, idx int) (ast.Node, int) {
	if key == "" {
		seq, ok := n.(*ast.SequenceNode)
		if !ok || idx < 0 || idx >= len(seq.Values) {
			return nil, 0
		}
		return seq.Values[idx], nodeLine(seq.Values[idx])
	}
	for _, mv := range entries(n) {
		if keyString(mv.Key) == key {
			return mv.Value, nodeLine(mv.Key)
		}
	}
	return nil, 0
}

// RewriteScalars calls fn with every string value of the document (never a
// key) and stores what it returns. A plain (unquoted) value that changes is
// re-read as YAML would read it, so "8080" becomes a number and "" a null;
// quoted and block values stay strings. Lines are unchanged.
func (d *Doc) RewriteScalars(fn func(value string, line int) (string, error)) (err error) {
	if d.Empty() {
		return nil
	}
	defer recoverAs(d.File, &err)
	return rewrite(&d.root, true, fn)
}

func rewrite(p *ast.Node, retype bool, fn func(string, int) (string, error)) error {
	switch n := (*p).(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			if err := rewrite(&mv.Value, true, fn); err != nil {
				return err
			}
		}
	case *ast.MappingValueNode:
		return rewrite(&n.Value, true, fn)
	case *ast.SequenceNode:
		for i := range n.Values {
			if err := rewrite(&n.Values[i], true, fn); err != nil {
				return err
			}
		}
	case *ast.AnchorNode:
		return rewrite(&n.Value, retype, fn)
	case *ast.TagNode:
		return rewrite(&n.Value, false, fn)
	case *ast.LiteralNode:
		if n.Value == nil {
			return nil
		}
		out, err := fn(n.Value.Value, nodeLine(n))
		n.Value.Value = out
		return err
	case *ast.StringNode:
		out, err := fn(n.Value, nodeLine(n))
		if err != nil || out == n.Value {
			return err
		}
		if retype && n.Token != nil && n.Token.Type == token.StringType {
			*p = plainScalar(out, n.Token)
			return nil
		}
		n.Value = out
	}
	return nil
}

// plainScalar builds the node YAML would have parsed for the unquoted text
// s at the position of orig.
func plainScalar(s string, orig *token.Token) ast.Node {
	tk := token.New(s, s, orig.Position)
	switch {
	case s == "" || tk.Type == token.NullType:
		tk.Type = token.NullType
		return ast.Null(tk)
	case tk.Type == token.BoolType:
		return ast.Bool(tk)
	case tk.Type == token.IntegerType, tk.Type == token.BinaryIntegerType,
		tk.Type == token.OctetIntegerType, tk.Type == token.HexIntegerType:
		return ast.Integer(tk)
	case tk.Type == token.FloatType:
		return ast.Float(tk)
	case tk.Type == token.InfinityType:
		return ast.Infinity(tk)
	case tk.Type == token.NanType:
		return ast.Nan(tk)
	}
	tk.Type = token.StringType
	return ast.String(tk)
}

// entries returns the key/value pairs of a mapping node, or nil.
func entries(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

// unwrap looks through anchors and tags at the node they annotate.
func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

func keyString(k ast.MapKeyNode) string {
	switch v := k.(type) {
	case nil:
		return ""
	case *ast.StringNode:
		return v.Value
	case *ast.MergeKeyNode:
		return "<<"
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

func nodeLine(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}
