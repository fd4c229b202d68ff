package textcall

import (
	"strings"

	"github.com/valyala/fastjson"
)

// callKeys are the keys a strict call object may have.
var callKeys = [...]string{"name", "arguments", "parameters", "id", "type", "function"}

// parseCalls parses s as one call object or a non-empty array of them. All
// must be calls of known tools, or none is taken. strict also rejects
// objects with keys a call does not have.
func parseCalls(s string, known func(string) bool, strict bool) ([]Call, bool) {
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil, false
	}
	var p fastjson.Parser
	v, err := p.Parse(s)
	if err != nil {
		return nil, false
	}
	if v.Type() == fastjson.TypeObject {
		c, ok := parseCall(v, known, strict)
		if !ok {
			return nil, false
		}
		return []Call{c}, true
	}
	items := v.GetArray()
	if len(items) == 0 {
		return nil, false
	}
	calls := make([]Call, 0, len(items))
	for _, it := range items {
		c, ok := parseCall(it, known, strict)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// parseCall reads one call object. Its arguments value is marshalled
// before anything inside it is accessed, so fastjson writes it back
// byte for byte (compacted).
func parseCall(v *fastjson.Value, known func(string) bool, strict bool) (Call, bool) {
	o, err := v.Object()
	if err != nil {
		return Call{}, false
	}
	if strict && !onlyCallKeys(o) {
		return Call{}, false
	}
	if fn := v.Get("function"); fn != nil && fn.Type() == fastjson.TypeObject {
		if fo, _ := fn.Object(); strict && !onlyCallKeys(fo) {
			return Call{}, false
		}
		v = fn
	}
	name := strings.TrimSpace(string(v.GetStringBytes("name")))
	if name == "" || !known(name) {
		return Call{}, false
	}
	a := v.Get("arguments")
	if a == nil {
		a = v.Get("parameters")
	}
	switch {
	case a == nil || a.Type() == fastjson.TypeNull:
		return Call{Name: name, Arguments: "{}"}, true
	case a.Type() == fastjson.TypeObject:
		// fastjson lets raw control characters through in strings.
		if args := string(a.MarshalTo(nil)); isObject(args) {
			return Call{Name: name, Arguments: args}, true
		}
	case a.Type() == fastjson.TypeString:
		s := strings.TrimSpace(string(a.GetStringBytes()))
		if s == "" {
			return Call{Name: name, Arguments: "{}"}, true
		}
		if isObject(s) {
			return Call{Name: name, Arguments: compact(s)}, true
		}
	}
	return Call{}, false
}

func onlyCallKeys(o *fastjson.Object) bool {
	ok := true
	o.Visit(func(k []byte, _ *fastjson.Value) {
		for _, ck := range callKeys {
			if string(k) == ck {
				return
			}
		}
		ok = false
	})
	return ok
}
