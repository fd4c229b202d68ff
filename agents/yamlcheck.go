package agents

import (
	"encoding"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// check walks the document beside the Go type it will be decoded into and
// reports the first unknown key or value of the wrong kind, with a message
// a user can act on. goccy/go-yaml would catch most of these too, but its
// messages name Go types and it silently truncates 1.5 into an int.
func (d *Doc) check(n ast.Node, t reflect.Type, path string) error {
	if tag, ok := n.(*ast.TagNode); ok && (tag.Value == nil || tag.Value.Type() == ast.NullType) {
		// goccy/go-yaml 1.19 dereferences the missing value and panics
		return d.typeErr(n, path, "has a tag but no value")
	}
	n = unwrap(n)
	if n == nil || n.Type() == ast.NullType || n.Type() == ast.AliasType {
		return nil // nulls keep defaults; goccy resolves aliases
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return nil
	}
	if t == reflect.TypeFor[ToolEnv]() {
		return d.checkToolEnv(n, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		return d.checkStruct(n, t, path)
	case reflect.Map:
		if _, ok := n.(*ast.MappingNode); !ok && entries(n) == nil {
			return d.typeErr(n, path, "must be a mapping")
		}
		for _, mv := range entries(n) {
			if err := d.check(mv.Value, t.Elem(), joinPath(path, keyString(mv.Key))); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			return d.typeErr(n, path, "must be a list")
		}
		for i, v := range seq.Values {
			if err := d.check(v, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.String:
		if !isScalar(n) {
			return d.typeErr(n, path, "must be a string")
		}
	case reflect.Bool:
		if n.Type() != ast.BoolType {
			return d.typeErr(n, path, "must be true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return d.checkInt(n, t, path)
	case reflect.Float32, reflect.Float64:
		switch n.Type() {
		case ast.IntegerType, ast.FloatType, ast.InfinityType, ast.NanType:
		default:
			return d.typeErr(n, path, "must be a number")
		}
	}
	return nil
}

func (d *Doc) checkStruct(n ast.Node, t reflect.Type, path string) error {
	if _, ok := n.(*ast.MappingNode); !ok && entries(n) == nil {
		return d.typeErr(n, path, "must be a mapping")
	}
	for _, mv := range entries(n) {
		key := keyString(mv.Key)
		if key == "<<" {
			continue // merge keys are resolved by the decoder
		}
		f, ok := fieldByKey(t, key)
		if !ok {
			msg := "unknown field " + strconv.Quote(key)
			if path != "" {
				msg += " in " + path
			}
			if s := suggest(key, t); s != "" {
				msg += " (did you mean " + strconv.Quote(s) + "?)"
			}
			d.Unknown = append(d.Unknown, &Error{File: d.File, Line: nodeLine(mv.Key), Msg: msg})
			continue
		}
		if err := d.check(mv.Value, f.Type, joinPath(path, key)); err != nil {
			return err
		}
	}
	return nil
}

// checkToolEnv accepts a list of names or a mapping of names to scalars.
func (d *Doc) checkToolEnv(n ast.Node, path string) error {
	const what = "must be a list of variable names or a mapping of names to values"
	if seq, ok := n.(*ast.SequenceNode); ok {
		for i, v := range seq.Values {
			if v = unwrap(v); v == nil || !isScalar(v) || v.Type() == ast.NullType {
				return d.typeErr(seq.Values[i], path+"["+strconv.Itoa(i)+"]", "must be a variable name")
			}
		}
		return nil
	}
	if _, ok := n.(*ast.MappingNode); !ok && entries(n) == nil {
		return d.typeErr(n, path, what)
	}
	for _, mv := range entries(n) {
		if v := unwrap(mv.Value); v != nil && !isScalar(v) {
			return d.typeErr(mv.Value, joinPath(path, keyString(mv.Key)), "must be a string")
		}
	}
	return nil
}

func (d *Doc) checkInt(n ast.Node, t reflect.Type, path string) error {
	const msg = "must be a whole number"
	var v float64
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch i := x.Value.(type) {
		case int64:
			v = float64(i)
		case uint64:
			v = float64(i)
		default:
			return d.typeErr(n, path, "is too large")
		}
	case *ast.FloatNode:
		v = x.Value
		if v != math.Trunc(v) {
			return d.typeErr(n, path, msg)
		}
	default:
		// goccy leaves integers beyond 64 bits as strings
		if tk := n.GetToken(); tk != nil && tk.Type == token.StringType {
			if f, err := strconv.ParseFloat(tk.Value, 64); err == nil && f == math.Trunc(f) {
				return d.typeErr(n, path, "is too large")
			}
		}
		return d.typeErr(n, path, msg)
	}
	if v > math.MaxInt64 || v < math.MinInt64 || reflect.New(t).Elem().OverflowInt(int64(v)) {
		return d.typeErr(n, path, "is too large")
	}
	return nil
}

func (d *Doc) typeErr(n ast.Node, path, what string) error {
	if path == "" {
		path = "the document"
	}
	return &Error{File: d.File, Line: nodeLine(n), Msg: path + " " + what}
}

// fieldByKey finds the struct field that the YAML key sets, following the
// same tag rules as goccy/go-yaml (",inline" embeds, "-" hides).
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	var found reflect.StructField
	ok := false
	eachKey(t, func(name string, f reflect.StructField) bool {
		if name == key {
			found, ok = f, true
		}
		return !ok
	})
	return found, ok
}

// eachKey calls fn with every YAML key of struct t until fn returns false.
func eachKey(t reflect.Type, fn func(string, reflect.StructField) bool) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			if !eachKey(f.Type, fn) {
				return false
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if !fn(name, f) {
			return false
		}
	}
	return true
}

// suggest returns the key of t closest to the misspelt key, or "".
func suggest(key string, t reflect.Type) string {
	best, bestDist := "", 3
	lower := strings.ToLower(key)
	eachKey(t, func(name string, _ reflect.StructField) bool {
		dist := editDistance(lower, strings.ToLower(name))
		if dist < bestDist && dist < len(name) {
			best, bestDist = name, dist
		}
		return true
	})
	return best
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost 1.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt32
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func isScalar(n ast.Node) bool {
	switch n.Type() {
	case ast.MappingType, ast.MappingValueType, ast.SequenceType, ast.MappingKeyType:
		return false
	}
	return true
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
