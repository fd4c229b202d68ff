package tmpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

var (
	errRenderOutput = fmt.Errorf("its output is over %d KiB: print less (trunc N cuts a value)", MaxOutput>>10)
	errHookEmpty    = errors.New("the template made an empty message of this body: check the field names it uses")
)

// Render renders t over data, a body from ParseBody. The error is one
// sentence for a 422: the output is over MaxOutput, or it is only white
// space.
func (t *Template) Render(data any) (string, error) {
	r := hookRenderer{root: data}
	var b strings.Builder
	for _, part := range t.parts {
		s, long := part.text, false
		if part.act != nil {
			s, long = r.print(r.eval(part.act))
		}
		if long || b.Len()+len(s) > MaxOutput {
			return "", fmt.Errorf("the template failed on this body: %w", errRenderOutput)
		}
		b.WriteString(s)
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", errHookEmpty
	}
	return b.String(), nil
}

// hookRenderer is the state of one render.
type hookRenderer struct {
	root any
	buf  []byte
	// keys holds each object's keys in order once sorted, by the map's
	// address, so that an object printed by many actions is sorted once.
	keys map[uintptr][]string
}

// hookValue is a value in an action's pipeline: a node of the body until
// a function makes it text. Text whose whole would pass MaxOutput
// bytes is kept only that far (at a character's start) and marked long:
// nothing long can be printed, a long text is not empty, and cutting it to
// N characters needs no more than it holds, or stays over the limit.
type hookValue struct {
	node   any
	text   string
	isText bool
	long   bool
}

// eval looks up the action's path and runs its functions.
func (r *hookRenderer) eval(a *hookAction) hookValue {
	v := hookValue{node: lookup(r.root, a.path)}
	for _, c := range a.calls {
		switch c.fn {
		case "default":
			if v.empty() {
				v = hookValue{text: c.text, isText: true}
			}
		case "json":
			if v.isText {
				s, long := r.encode(v.text)
				v = hookValue{text: s, isText: true, long: long || v.long}
			} else {
				s, long := r.encode(v.node)
				v = hookValue{text: s, isText: true, long: long}
			}
		case "trunc":
			s, long := r.print(v)
			if cut, ok := truncRunes(s, c.n); ok {
				s, long = cut, false
			}
			v = hookValue{text: s, isText: true, long: long}
		}
	}
	return v
}

// lookup follows path from v; a missing key, an index out of range or a
// step into a value that is no object or array gives nil.
func lookup(v any, path []string) any {
	for _, k := range path {
		switch n := v.(type) {
		case map[string]any:
			v = n[k]
		case []any:
			i, ok := arrayIndex(k)
			if !ok || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

// arrayIndex reads a key of digits as an index.
func arrayIndex(k string) (int, bool) {
	if k == "" || len(k) > 9 || strings.ContainsFunc(k, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	i, err := strconv.Atoi(k)
	return i, err == nil
}

// empty reports whether default replaces v: missing, null, "", 0, false,
// [] or {}.
func (v hookValue) empty() bool {
	if v.isText {
		return v.text == "" && !v.long
	}
	switch n := v.node.(type) {
	case nil:
		return true
	case string:
		return n == ""
	case json.Number:
		return zeroNumber(string(n))
	case float64:
		return n == 0
	case bool:
		return !n
	case map[string]any:
		return len(n) == 0
	case []any:
		return len(n) == 0
	}
	return false
}

// zeroNumber reports whether a JSON number is zero: no digit of its
// mantissa is other than 0.
func zeroNumber(s string) bool {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r >= '1' && r <= '9' })
}

// print is v as text: null (or missing) empty, a string as is, a number
// as written, an object or array as compact JSON.
func (r *hookRenderer) print(v hookValue) (string, bool) {
	if v.isText {
		return v.text, v.long
	}
	switch n := v.node.(type) {
	case nil:
		return "", false
	case string:
		return n, false
	case json.Number:
		return string(n), false
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64), false
	case bool:
		return strconv.FormatBool(n), false
	}
	return r.encode(v.node)
}

// truncRunes cuts s to its first n characters when it has at least n.
func truncRunes(s string, n int) (string, bool) {
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, i == n
}

// encode writes v as compact JSON (object keys sorted, no HTML escaping),
// stopping past MaxOutput bytes: then it is long.
func (r *hookRenderer) encode(v any) (string, bool) {
	r.buf = r.buf[:0]
	if r.value(v) {
		return string(r.buf), false
	}
	k := MaxOutput
	for k > 0 && !utf8.RuneStart(r.buf[k]) {
		k--
	}
	return string(r.buf[:k]), true
}

// value appends v to r.buf; false when r.buf is past MaxOutput.
func (r *hookRenderer) value(v any) bool {
	switch n := v.(type) {
	case string:
		return r.str(n)
	case json.Number:
		if n == "" {
			n = "0"
		}
		r.buf = append(r.buf, n...)
	case float64:
		r.buf = strconv.AppendFloat(r.buf, n, 'g', -1, 64)
	case bool:
		r.buf = strconv.AppendBool(r.buf, n)
	case []any:
		r.buf = append(r.buf, '[')
		for i, x := range n {
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			if !r.value(x) {
				return false
			}
		}
		r.buf = append(r.buf, ']')
	case map[string]any:
		r.buf = append(r.buf, '{')
		for i, k := range r.sortedKeys(n) {
			if i > 0 {
				r.buf = append(r.buf, ',')
			}
			if !r.str(k) {
				return false
			}
			r.buf = append(r.buf, ':')
			if !r.value(n[k]) {
				return false
			}
		}
		r.buf = append(r.buf, '}')
	default:
		r.buf = append(r.buf, "null"...)
	}
	return len(r.buf) <= MaxOutput
}

// sortedKeys returns m's keys in order, sorting them once per render.
func (r *hookRenderer) sortedKeys(m map[string]any) []string {
	if len(m) < 2 {
		for k := range m {
			return []string{k}
		}
		return nil
	}
	p := reflect.ValueOf(m).Pointer()
	if ks, ok := r.keys[p]; ok {
		return ks
	}
	if r.keys == nil {
		r.keys = map[uintptr][]string{}
	}
	ks := slices.Sorted(maps.Keys(m))
	r.keys[p] = ks
	return ks
}

// str appends s as a JSON string; false when r.buf is past MaxOutput.
func (r *hookRenderer) str(s string) bool {
	r.buf = append(r.buf, '"')
	for i := 0; i < len(s); {
		if len(r.buf) > MaxOutput {
			return false
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case c == '"' || c == '\\':
			r.buf = append(r.buf, '\\', byte(c))
		case c == '\n':
			r.buf = append(r.buf, '\\', 'n')
		case c == '\r':
			r.buf = append(r.buf, '\\', 'r')
		case c == '\t':
			r.buf = append(r.buf, '\\', 't')
		case c < 0x20 || c == '\u2028' || c == '\u2029':
			r.buf = fmt.Appendf(r.buf, `\u%04x`, c)
		default:
			r.buf = utf8.AppendRune(r.buf, c) // an invalid byte becomes U+FFFD
		}
	}
	r.buf = append(r.buf, '"')
	return len(r.buf) <= MaxOutput
}
