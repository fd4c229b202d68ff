package llm

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string literal. Unlike
// strconv.AppendQuote its output is always valid JSON: control characters
// become \n, \t, \r or \u00XX, invalid UTF-8 becomes \ufffd, and U+2028 and
// U+2029 are escaped so the output is also safe inside JavaScript.
func AppendString(dst []byte, s string) []byte {
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
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// IsObject reports whether b is exactly one valid JSON object (surrounding
// whitespace allowed).
func IsObject[T ~string | ~[]byte](b T) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			if s, ok := any(b).(string); ok {
				return fastjson.Validate(s) == nil
			}
			return fastjson.ValidateBytes([]byte(b)) == nil
		}
		return false
	}
	return false
}

// AppendFloat appends f as a JSON number; NaN and infinities, which JSON
// cannot express, become 0.
func AppendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// EmptySchema is the JSON Schema sent for a tool that declares none.
const EmptySchema = `{"type":"object","properties":{}}`
