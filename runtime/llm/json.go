package llm

import (
	"math"
	"strconv"

	"github.com/valyala/fastjson"
)

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
