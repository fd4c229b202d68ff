package main

import (
	"fmt"
	"strconv"
	"strings"
)

// Query walks doc along path: keys separated by dots, list indexes in
// brackets ("a.b[0].c", "[2]", "" for the whole document).
func Query(doc any, path string) (any, error) {
	cur, at := doc, ""
	for rest := path; rest != ""; {
		var key string
		idx := -1
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			continue
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ] in path %q", path)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%q in path %q is not a list index", rest[1:end], path)
			}
			idx, rest = n, rest[end+1:]
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key, rest = rest[:end], rest[end:]
		}
		next, err := step(cur, key, idx, at)
		if err != nil {
			return nil, err
		}
		if idx >= 0 {
			at += "[" + strconv.Itoa(idx) + "]"
		} else if at == "" {
			at = key
		} else {
			at += "." + key
		}
		cur = next
	}
	return cur, nil
}

func step(cur any, key string, idx int, at string) (any, error) {
	where := at
	if where == "" {
		where = "the top level"
	}
	if idx >= 0 {
		list, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a list", where)
		}
		if idx >= len(list) {
			return nil, fmt.Errorf("index %d is out of range at %s (length %d)", idx, where, len(list))
		}
		return list[idx], nil
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object, so it has no key %q", where, key)
	}
	v, ok := obj[key]
	if !ok {
		return nil, fmt.Errorf("there is no key %q at %s", key, where)
	}
	return v, nil
}
