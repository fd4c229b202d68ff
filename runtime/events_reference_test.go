package runtime

import (
	"github.com/agnx-lite/agnx-lite/ci/golden"
	"github.com/agnx-lite/agnx-lite/ci/testenv"

	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// docs/reference/events.md is generated from the code: the types and what
// they mean from EventTypes, their keys from what AppendJSON writes for
// sampleEvents (which sets every field). The test fails when the page is
// stale; -update rewrites it.
func TestEventsReference(t *testing.T) {
	golden.Check(t, filepath.Join(testenv.ModuleRoot(t), "docs", "reference", "events.md"), eventsReference(t),
		"go test ./runtime -run TestEventsReference -update")
}

func eventsReference(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# Session events\n\n" +
		"Generated from the code by `make docs`; do not edit.\n" +
		"The types and what they mean come from `runtime.EventTypes` (runtime/event_types.go), " +
		"their keys from what `Event.AppendJSON` (runtime/event.go) writes.\n\n" +
		"A session is a log of events. Each is one JSON object, as the database stores it and as " +
		"`agnx-lite session export --format lite` and `GET /api/v1/sessions/{id}/export` write it, one a line. " +
		"Every event has the keys below; the others depend on its type. " +
		"A key marked *optional* is written only when it has a value.\n\n")
	envelope := eventKeys(t, Event{Type: EvSessionEnd})[:3] // seq, timestamp, type come first
	b.WriteString("| key | JSON type | meaning |\n| --- | --- | --- |\n")
	meaning := map[string]string{
		"seq":       "the event's place in the session's log, from 1; 0 for events that are not stored",
		"timestamp": "when it happened, RFC 3339 in UTC",
		"type":      "one of the types below",
	}
	for _, k := range envelope {
		require.Contains(t, meaning, k.key, "AppendJSON starts with a key this page does not explain")
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.key, k.kind, meaning[k.key])
	}
	for _, durable := range []bool{true, false} {
		if durable {
			b.WriteString("\n## Durable events\n\nStored in the session's log, each with its `seq`.\n")
		} else {
			b.WriteString("\n## Live events\n\nSent to the clients following a session only, never stored (`seq` 0).\n")
		}
		for _, info := range EventTypes() {
			if info.Durable != durable {
				continue
			}
			writeEventType(t, &b, info, len(envelope))
		}
	}
	return b.String()
}

// writeEventType writes one type's section: what it means and its keys.
func writeEventType(t *testing.T, b *strings.Builder, info EventTypeInfo, skip int) {
	sample, ok := sampleEvents[info.Type]
	require.True(t, ok, "add a sample of %s to sampleEvents", info.Type)
	sample.Type = info.Type
	optional := optionalKeys(t, sample)
	fmt.Fprintf(b, "\n### %s\n\n%s.\n\n", info.Type, upperFirst(info.Doc))
	b.WriteString("| key | JSON type |\n| --- | --- |\n")
	for _, k := range eventKeys(t, sample)[skip:] {
		opt := ""
		if optional[k.key] {
			opt = " *optional*"
		}
		fmt.Fprintf(b, "| `%s`%s | %s |\n", k.key, opt, k.kind)
	}
}

// eventKey is one key AppendJSON writes, nested ones as a.b or a[].b.
type eventKey struct{ key, kind string }

// freeJSON are the keys whose value is JSON of the model's or a tool's
// own (a call's arguments, a result's details): their keys are not the
// event's.
var freeJSON = map[string]bool{"arguments": true, "details": true}

// eventKeys lists the keys of e's JSON in the order AppendJSON writes them.
func eventKeys(t *testing.T, e Event) []eventKey {
	e.Time = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v, err := fastjson.ParseBytes(e.AppendJSON(nil))
	require.NoError(t, err)
	var out []eventKey
	seen := map[string]bool{}
	var walk func(prefix string, o *fastjson.Object)
	walk = func(prefix string, o *fastjson.Object) {
		o.Visit(func(k []byte, v *fastjson.Value) {
			key := prefix + string(k)
			if !seen[key] { // a list's elements repeat their keys
				seen[key] = true
				out = append(out, eventKey{key, jsonKind(v)})
			}
			switch {
			case freeJSON[string(k)]:
			case v.Type() == fastjson.TypeObject:
				walk(key+".", v.GetObject())
			case v.Type() == fastjson.TypeArray:
				for _, el := range v.GetArray() {
					if el.Type() == fastjson.TypeObject {
						walk(key+"[].", el.GetObject())
					}
				}
			}
		})
	}
	walk("", v.GetObject())
	return out
}

// optionalKeys finds the keys of sample's JSON that AppendJSON leaves out
// when their field has no value: it zeroes each field of the event (and
// of the structs and list elements in it) in turn, and a key that
// disappears while the object holding it stays is optional.
func optionalKeys(t *testing.T, sample Event) map[string]bool {
	var fields [][]int // paths of reflect indexes; -1 steps into every element of a list
	var collect func(path []int, typ reflect.Type)
	collect = func(path []int, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || len(path) == 0 && f.Name == "Type" {
				continue // the type decides which keys there are
			}
			p := append(slices.Clone(path), i)
			fields = append(fields, p)
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]():
				collect(p, ft)
			case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
				collect(p, ft.Elem())
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				collect(append(p, -1), ft.Elem())
			}
		}
	}
	collect(nil, reflect.TypeFor[Event]())
	var p fastjson.Parser
	opt := map[string]bool{}
	for _, path := range fields {
		// A deep copy: the round trip gives the sample back whole
		// (TestEventTypes_LogRoundTrip).
		e, err := DecodeEvent(&p, sample.AppendJSON(nil))
		require.NoError(t, err)
		if !zeroField(reflect.ValueOf(&e).Elem(), path) {
			continue
		}
		left := map[string]bool{"": true} // the keys written, and "a[]" for a list a with an element
		for _, k := range eventKeys(t, e) {
			left[k.key] = true
			if i := strings.LastIndex(k.key, "[]."); i > 0 {
				left[k.key[:i+2]] = true
			}
		}
		for _, k := range eventKeys(t, sample) {
			parent := k.key[:max(strings.LastIndex(k.key, "."), 0)]
			if !left[k.key] && left[parent] {
				opt[k.key] = true
			}
		}
	}
	return opt
}

// zeroField sets the field at path in v to its zero value, in every
// element of a list on the way; false when the path leads nowhere (a nil
// pointer, an empty list).
func zeroField(v reflect.Value, path []int) bool {
	if len(path) == 0 {
		v.SetZero()
		return true
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return false
		}
		v = v.Elem()
	}
	if path[0] == -1 {
		done := false
		for i := range v.Len() {
			done = zeroField(v.Index(i), path[1:]) || done
		}
		return done
	}
	return zeroField(v.Field(path[0]), path[1:])
}

// jsonKind names v's JSON type, and an array's element type.
func jsonKind(v *fastjson.Value) string {
	switch v.Type() {
	case fastjson.TypeArray:
		if a := v.GetArray(); len(a) > 0 {
			return "array of " + jsonKind(a[0]) + "s"
		}
		return "array"
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return "boolean"
	}
	return v.Type().String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
