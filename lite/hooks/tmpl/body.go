package tmpl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ParseBody parses one JSON value, numbers kept as written; an empty
// body is null. Any value will do: the template sees it as dot.
func ParseBody(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("the body is not valid JSON (at byte %d): send one JSON value", syntax.Offset)
		}
		return nil, errors.New("the body is not valid JSON: send one whole JSON value")
	}
	if dec.More() {
		return nil, errors.New("the body holds more than one JSON value: send one")
	}
	return v, nil
}
