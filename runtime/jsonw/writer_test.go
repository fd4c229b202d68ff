package jsonw_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

func TestWriter(t *testing.T) {
	w := jsonw.Writer{B: []byte("data: ")}
	w.Object()
	w.Key("seq").Uint(math.MaxUint64)
	w.Key("n").Int(-3)
	w.Key("t").Float(0.7)
	w.Key("nan").Float(math.NaN())
	w.Key("ok").Bool(true)
	w.Key("none").Null()
	w.OptString("empty", "")
	w.OptString("name", "x")
	w.Key("calls").Array()
	for _, id := range []string{"a", "b"} {
		w.Object().Key("id").String(id).Key("args").RawString(`{"k":[1,2]}`).EndObject()
	}
	w.EndArray()
	w.Key("empty_list").Array().EndArray()
	w.Key("empty_obj").Object().EndObject()
	w.Key("raw").Raw([]byte(`[true]`))
	w.Key("after").String("end")
	w.EndObject()
	want := `data: {"seq":18446744073709551615,"n":-3,"t":0.7,"nan":0,"ok":true,"none":null,"name":"x",` +
		`"calls":[{"id":"a","args":{"k":[1,2]}},{"id":"b","args":{"k":[1,2]}}],"empty_list":[],"empty_obj":{},` +
		`"raw":[true],"after":"end"}`
	assert.Equal(t, want, string(w.B))
	assert.True(t, json.Valid(w.B[len("data: "):]))
}

func TestWriter_TopLevelArray(t *testing.T) {
	var w jsonw.Writer
	w.Array().String("a").Int(1).Array().EndArray().Object().EndObject().Bool(false).EndArray()
	assert.Equal(t, `["a",1,[],{},false]`, string(w.B))
}

func TestWriter_Float(t *testing.T) {
	for _, f := range []float64{0, 1, -2.5, 1e21, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		var w jsonw.Writer
		w.Float(f)
		var back float64
		require.NoError(t, json.Unmarshal(w.B, &back), "%s", w.B)
		assert.Equal(t, f, back)
	}
	var w jsonw.Writer
	w.Array().Float(math.Inf(1)).Float(math.Inf(-1)).EndArray()
	assert.Equal(t, `[0,0]`, string(w.B))
}

// FuzzWriter writes an object of every kind of value from the fuzzer's
// input and checks that encoding/json reads the same values back.
func FuzzWriter(f *testing.F) {
	f.Add("key", "value\n\"q\"", int64(-1), uint64(1), 0.5, true)
	f.Add("\xff\u2028", "\x00<&>", int64(math.MinInt64), uint64(math.MaxUint64), math.Inf(1), false)
	f.Fuzz(func(t *testing.T, k, s string, i int64, u uint64, fl float64, b bool) {
		var w jsonw.Writer
		w.Object()
		w.Key("k").String(k)
		w.Key("s").String(s)
		w.Key("i").Int(i)
		w.Key("u").Uint(u)
		w.Key("f").Float(fl)
		w.Key("b").Bool(b)
		w.Key("list").Array().String(s).Object().Key(k).String(s).EndObject().EndArray()
		w.OptString("opt", s)
		w.EndObject()
		var back struct {
			K, S string
			I    int64
			U    uint64
			F    float64
			B    bool
			List []json.RawMessage
			Opt  *string
		}
		if err := json.Unmarshal(w.B, &back); err != nil {
			t.Fatalf("invalid JSON %q: %v", w.B, err)
		}
		if math.IsNaN(fl) || math.IsInf(fl, 0) {
			fl = 0
		}
		assert.Equal(t, toValid(k), back.K)
		assert.Equal(t, toValid(s), back.S)
		assert.Equal(t, i, back.I)
		assert.Equal(t, u, back.U)
		assert.Equal(t, fl, back.F)
		assert.Equal(t, b, back.B)
		assert.Len(t, back.List, 2)
		assert.Equal(t, s != "", back.Opt != nil)
	})
}

// toValid is what encoding/json decodes a string with invalid UTF-8 to.
func toValid(s string) string {
	b, _ := json.Marshal(s)
	var back string
	_ = json.Unmarshal(b, &back)
	return back
}

func BenchmarkWriter_Event(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		w := jsonw.Writer{B: buf[:0]}
		w.Object()
		w.Key("seq").Uint(42)
		w.Key("timestamp").String("2026-01-02T03:04:05.123456789Z")
		w.Key("type").String("assistant_response")
		w.Key("content").String("Hello! How can I help you today?")
		w.Key("tool_calls").Array().EndArray()
		w.EndObject()
		buf = w.B
	}
}
