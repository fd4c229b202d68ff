package textcall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func knownTools(names ...string) func(string) bool {
	return func(n string) bool {
		for _, k := range names {
			if k == n {
				return true
			}
		}
		return false
	}
}

var known = knownTools("get_weather", "read_file", "search")

func TestExtract(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		calls []Call
		rest  string
	}{
		{
			name:  "qwen tool_call block",
			text:  "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			calls: []Call{{"get_weather", `{"city":"Paris"}`}},
		},
		{
			name: "qwen3 think then two calls",
			text: "<think>\nThe user wants weather in two cities. I'll call get_weather twice.\n</think>\n\n" +
				"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n" +
				"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>",
			calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_weather", `{"city":"Rome"}`}},
			rest:  "<think>\nThe user wants weather in two cities. I'll call get_weather twice.\n</think>",
		},
		{
			name:  "prose before a block",
			text:  "Let me look that up.\n<tool_call>{\"name\":\"search\",\"arguments\":{\"q\":\"go 1.26\"}}</tool_call>",
			calls: []Call{{"search", `{"q":"go 1.26"}`}},
			rest:  "Let me look that up.",
		},
		{
			name:  "unterminated trailing block",
			text:  "Sure.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}",
			calls: []Call{{"read_file", `{"path":"a.txt"}`}},
			rest:  "Sure.",
		},
		{
			name:  "stray closing brace in block",
			text:  "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}\n</tool_call>",
			calls: []Call{{"read_file", `{"path":"a.txt"}`}},
		},
		{
			name:  "nested braces and tags in strings",
			text:  `<tool_call>{"name": "search", "arguments": {"q": "} ] </tool_call> {\"x\": [1]}"}}</tool_call>`,
			calls: nil,
			rest:  `<tool_call>{"name": "search", "arguments": {"q": "} ] </tool_call> {\"x\": [1]}"}}</tool_call>`,
		},
		{
			name:  "nested braces in strings, fenced",
			text:  "```json\n{\"name\": \"search\", \"arguments\": {\"q\": \"a {b} [c] \\\"d\\\"\"}}\n```",
			calls: []Call{{"search", `{"q":"a {b} [c] \"d\""}`}},
		},
		{
			name:  "arguments as a JSON string",
			text:  `<tool_call>{"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}</tool_call>`,
			calls: []Call{{"get_weather", `{"city":"Oslo"}`}},
		},
		{
			name:  "llama bare object with parameters",
			text:  `{"name": "get_weather", "parameters": {"city": "Lima"}}`,
			calls: []Call{{"get_weather", `{"city":"Lima"}`}},
		},
		{
			name:  "llama 3.2 type function",
			text:  `{"type": "function", "name": "search", "parameters": {"q": "x"}}`,
			calls: []Call{{"search", `{"q":"x"}`}},
		},
		{
			name:  "llama python_tag",
			text:  `<|python_tag|>{"name": "search", "parameters": {"q": "rust"}}`,
			calls: []Call{{"search", `{"q":"rust"}`}},
		},
		{
			name:  "mistral TOOL_CALLS array",
			text:  `[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Bern"}}, {"name": "search", "arguments": {}}]`,
			calls: []Call{{"get_weather", `{"city":"Bern"}`}, {"search", `{}`}},
		},
		{
			name:  "mistral name ARGS form",
			text:  `[TOOL_CALLS]read_file[ARGS]{"path": "/etc/hosts"}`,
			calls: []Call{{"read_file", `{"path":"/etc/hosts"}`}},
		},
		{
			name:  "openai-like function wrapper in a fence",
			text:  "I'll search.\n```\n[{\"type\": \"function\", \"function\": {\"name\": \"search\", \"arguments\": \"{\\\"q\\\": \\\"x\\\"}\"}}]\n```\nDone.",
			calls: []Call{{"search", `{"q":"x"}`}},
			rest:  "I'll search.\n\nDone.",
		},
		{
			name: "fenced python is not a call",
			text: "```python\n{\"name\": \"search\", \"arguments\": {}}\n```",
			rest: "```python\n{\"name\": \"search\", \"arguments\": {}}\n```",
		},
		{
			name: "unknown tool stays text",
			text: `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`,
			rest: `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`,
		},
		{
			name: "JSON answer naming a person, not a tool",
			text: `{"name": "Alice", "age": 30}`,
			rest: `{"name": "Alice", "age": 30}`,
		},
		{
			name: "bare object with extra keys is data",
			text: `{"name": "search", "arguments": {}, "score": 3}`,
			rest: `{"name": "search", "arguments": {}, "score": 3}`,
		},
		{
			name: "invalid JSON left as text",
			text: "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"\n</tool_call>",
			rest: "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"\n</tool_call>",
		},
		{
			name: "arguments not an object",
			text: `{"name": "search", "arguments": [1, 2]}`,
			rest: `{"name": "search", "arguments": [1, 2]}`,
		},
		{
			name: "prose mentioning a tool",
			text: "I could use get_weather with {\"city\": \"Paris\"} if you want.",
			rest: "I could use get_weather with {\"city\": \"Paris\"} if you want.",
		},
		{
			name: "plain prose",
			text: "  Hello there!\n",
			rest: "Hello there!",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls, rest := Extract(tt.text, known)
			assert.Equal(t, tt.calls, calls)
			assert.Equal(t, tt.rest, rest)
		})
	}
}

func TestExtract_NilKnownAcceptsAll(t *testing.T) {
	calls, _ := Extract(`<tool_call>{"name":"anything","arguments":{}}</tool_call>`, nil)
	require.Len(t, calls, 1)
	assert.Equal(t, "anything", calls[0].Name)
}

func FuzzExtract(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		calls, rest := Extract(text, known)
		for _, c := range calls {
			if !known(c.Name) || !isObject(c.Arguments) {
				t.Fatalf("bad call %+v", c)
			}
		}
		if len(calls) == 0 && rest != strings.TrimSpace(text) {
			t.Fatalf("rest changed without calls")
		}
		// The filter must never emit more than it was given, in order.
		var out strings.Builder
		fl := NewFilter(func(s string) { out.WriteString(s) })
		for i := 0; i < len(text); i += 7 {
			fl.Write(text[i:min(i+7, len(text))])
		}
		fl.Flush()
		if out.String() != text {
			t.Fatalf("filter changed the text: %q", out.String())
		}
	})
}
