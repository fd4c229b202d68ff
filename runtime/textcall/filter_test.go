package textcall

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// feed writes deltas to a new Filter and returns what it emitted before
// the end and the filter.
func feed(deltas ...string) (*strings.Builder, *Filter) {
	out := &strings.Builder{}
	f := NewFilter(func(s string) { out.WriteString(s) })
	for _, d := range deltas {
		f.Write(d)
	}
	return out, f
}

func TestFilter_Write(t *testing.T) {
	tests := []struct {
		name    string
		deltas  []string
		live    string // emitted before Flush/Discard
		discard string // emitted in total when Discard is called
	}{
		{"plain text streams", []string{"Hel", "lo ", "world"}, "Hello world", "Hello world"},
		{"tag split across deltas", []string{"Checking.\n<to", "ol_c", "all>{\"name\":", "\"x\"}</tool_call>"}, "Checking.\n", "Checking.\n"},
		{"lookalike tag released", []string{"a <to", "p> b"}, "a <top> b", "a <top> b"},
		{"leading brace holds all", []string{"  {\"name\"", ": \"search\"}"}, "", ""},
		{"leading bracket holds all", []string{"[TOOL_CALLS] [", "{}]"}, "", ""},
		{"json fence holds", []string{"See:\n``", "`json\n{}\n```"}, "See:\n", "See:\n"},
		{"python fence streams", []string{"Code:\n```py", "thon\nprint(1)\n", "```\nAfter <tool_call>"}, "Code:\n```python\nprint(1)\n```\nAfter ", "Code:\n```python\nprint(1)\n```\nAfter "},
		{"python tag", []string{"x<|python", "_tag|>{}"}, "x", "x"},
		{"brace later is fine", []string{"Use {braces}"}, "Use {braces}", "Use {braces}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, f := feed(tt.deltas...)
			assert.Equal(t, tt.live, out.String())
			f.Discard()
			assert.Equal(t, tt.discard, out.String())

			out, f = feed(tt.deltas...)
			f.Flush()
			assert.Equal(t, strings.Join(tt.deltas, ""), out.String(), "Flush releases everything")
		})
	}
}

func TestFilter_WithExtract(t *testing.T) {
	deltas := []string{"<think>need weather</think>\n", "<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"}
	out, f := feed(deltas...)
	calls, rest := Extract(strings.Join(deltas, ""), known)
	assert.Equal(t, []Call{{"get_weather", `{"city":"Oslo"}`}}, calls)
	assert.Equal(t, "<think>need weather</think>", rest)
	f.Discard()
	assert.Equal(t, "<think>need weather</think>\n", out.String())
}
