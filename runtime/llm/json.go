package llm

import "github.com/valyala/fastjson"

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

// EmptySchema is the JSON Schema sent for a tool that declares none.
const EmptySchema = `{"type":"object","properties":{}}`
