package runtime

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSONString appends s to dst as a JSON string literal. Invalid UTF-8
// becomes U+FFFD; U+2028 and U+2029 are escaped so the output is also safe
// inside JavaScript and SSE data lines.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonObject appends the fields of one JSON object. The zero value starts a
// new object on the first field; end closes it. Fields with zero values are
// left out by the *Opt methods, as omitempty would.
type jsonObject struct {
	b     []byte
	first bool
}

func newObject(dst []byte) jsonObject { return jsonObject{b: append(dst, '{'), first: true} }

func (o *jsonObject) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = AppendJSONString(o.b, v)
}

func (o *jsonObject) strOpt(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

// raw appends v, which must already be valid JSON.
func (o *jsonObject) raw(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, v...)
}

func (o *jsonObject) end() []byte { return append(o.b, '}') }
