package tmpl

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func render(t *testing.T, tmpl, body string) (string, error) {
	t.Helper()
	tp, err := Parse(tmpl)
	require.NoError(t, err, tmpl)
	data, err := ParseBody([]byte(body))
	require.NoError(t, err)
	return tp.Render(data)
}

func TestRenderHook(t *testing.T) {
	const push = `{"repository": {"full_name": "o/r", "id": 123456789}, "action": "opened",
		"commits": [{"id": "a", "n": 1.50}, {"id": "b"}], "title": "a long title here", "empty": "",
		"zero": 0, "zerof": -0.0e5, "no": false, "yes": true, "none": null, "list": [], "obj": {},
		"html": "<a href=\"x\">&</a>", "multi": "héllo wörld", "odd key": 1, "0": "zero key", "a-b": "dash",
		"pull_request": {"title": "Fix it"}}`
	for _, c := range []struct{ tmpl, body, want string }{
		{"{{.repository.full_name}}: {{.action}}", push, "o/r: opened"},
		{`{{.pull_request.title | default ""}}`, push, "Fix it"},
		{"id {{.repository.id}} n {{.commits.0.n}}", push, "id 123456789 n 1.50"}, // numbers as written
		{"{{.commits.1.id}} {{.commits.2.id}}|{{.commits.x}}|{{.commits.01.id}}", push, "b |" + "|b"},
		{"{{.0}} {{.a-b}}", push, "zero key dash"},
		{"[{{.missing}}][{{.none}}][{{.title.deeper}}][{{.repository.full_name.x}}]", push, "[][][][]"},
		{"{{.yes}} {{.no}} {{.zero}}", push, "true false 0"},
		{`{{.missing | default "none"}} {{.empty | default "e"}} {{.action | default "x"}}`, push, "none e opened"},
		{`{{.zero | default "z"}} {{.zerof | default "z"}} {{.no | default "f"}} {{.list | default "l"}} {{.obj | default "o"}} {{.none | default "n"}}`, push, "z z f l o n"},
		{`{{.yes | default "y"}} {{.commits.0.n | default "n"}}`, push, "true 1.50"},
		{"{{.title | trunc 6}}|{{.multi | trunc 2}}|{{.title | trunc 0}}x|{{.title | trunc 99}}", push, "a long|hé|x|a long title here"},
		{"{{.commits | json}}", push, `[{"id":"a","n":1.50},{"id":"b"}]`},
		{"{{.commits}}", push, `[{"id":"a","n":1.50},{"id":"b"}]`},
		{"{{.repository}}", push, `{"full_name":"o/r","id":123456789}`},
		{"{{.html | json}} {{.action | json}} {{.missing | json}} {{.zero | json}}", push, `"<a href=\"x\">&</a>" "opened" null 0`},
		{"{{.commits | json | trunc 8}}", push, `[{"id":"`},
		{`{{.missing | default "a\"b\\c" | json}}`, push, `"a\"b\\c"`},
		{`{{.missing | json | default "x"}} {{.empty | trunc 3 | default "d"}}`, push, "null d"},
		{"{{   .action|trunc   3  |json   }}", push, `"ope"`},
		{"{{\n.action\n}}", push, "opened"},
		{"a  {{- .action -}}  b {{- /* note */ -}} c {{/* x }} */}}d", push, "aopenedbc d"},
		{"{{-.action}}", push, "<err>"},
		{"x {{.odd key}}", push, "<err>"},
		{"got {{.}}", `"just a string"`, "got just a string"},
		{"{{.1}} {{.}}", `[1, 2, 3]`, "2 [1,2,3]"},
		{"static }} text", ``, "static }} text"},
		{"ctl {{. | json}}", `"a\u0001\n\t\u2028"`, `ctl "a\u0001\n\t\u2028"`},
	} {
		tp, err := Parse(c.tmpl)
		if c.want == "<err>" {
			assert.Error(t, err, c.tmpl)
			continue
		}
		require.NoError(t, err, c.tmpl)
		data, err := ParseBody([]byte(c.body))
		require.NoError(t, err)
		got, err := tp.Render(data)
		require.NoError(t, err, c.tmpl)
		assert.Equal(t, c.want, got, c.tmpl)
	}
}

func TestRenderHook_Errors(t *testing.T) {
	big := `{"s": "` + strings.Repeat("é", 9000) + `", "a": [` + strings.Repeat(`"x",`, 5000) + `1]}`
	for _, c := range []struct{ tmpl, body, want string }{
		{"{{.repository.full_name}}", `{"repository": "flat"}`, "made an empty message"},
		{"  {{.missing}}\n", `{}`, "made an empty message"},
		{"{{.s}}", big, "over 16 KiB"},
		{"{{.a}}", big, "over 16 KiB"},
		{"{{.s | json | trunc 16384}}", big, "over 16 KiB"}, // the cut keeps 16,384 characters, more bytes
		{"{{.s | trunc 8000}}{{.s | trunc 8000}}", big, "over 16 KiB"},
	} {
		_, err := render(t, c.tmpl, c.body)
		require.Error(t, err, c.tmpl)
		assert.Contains(t, err.Error(), c.want, c.tmpl)
	}
	out, err := render(t, "{{.a | trunc 10}} {{.s | trunc 3}} {{.a | json | default \"x\" | trunc 4}}", big)
	require.NoError(t, err)
	assert.Equal(t, `["x","x"," ééé ["x"`, out)
	out, err = render(t, "{{.s | json | trunc 5000}}", big)
	require.NoError(t, err)
	assert.Equal(t, `"`+strings.Repeat("é", 4999), out)
}

func TestParseHookTemplate_Errors(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{"ab {{.a", "the action at byte 3 is not closed: end it with }}"},
		{"{{.a | default \"x}}", "default at byte 7 needs a text in double quotes"},
		{"{{.a | exec}}", `the function "exec" at byte 7 is unknown: use default, json or trunc`},
		{"{{.a | printf \"%d\"}}", `the function "printf" at byte 7 is unknown`},
		{"{{.a | }}", "the | at byte 5 has no function after it"},
		{"{{.a | trunc}}", "trunc at byte 7 needs a number of characters"},
		{"{{.a | trunc -1}}", "trunc at byte 7 needs a number"},
		{"{{.a | trunc 99999}}", "from 0 to 16384"},
		{"{{.a | default none}}", "default at byte 7 needs a text in double quotes"},
		{`{{.a | default "\n"}}`, "default at byte 7 needs a text"},
		{"x{{ }}", "the action at byte 1 is empty"},
		{"{{}}", "the action at byte 0 is empty"},
		{"{{range .a}}{{.}}{{end}}", `"range" at byte 2 is not supported: only .path and | default/json/trunc are supported`},
		{"{{if .x}}y{{end}}", `"if" at byte 2 is not supported`},
		{"{{json .}}", `"json" at byte 2 is not supported`},
		{"{{$x := .}}", `"$x" at byte 2 is not supported`},
		{"{{.a .b}}", `".b" at byte 5 is not supported`},
		{"{{.a..b}}", "the path at byte 4 has an empty key"},
		{"{{.a.}}", "the path at byte 4 has an empty key"},
		{"{{.a | json x}}", `"x" at byte 12 is not supported`},
		{"{{/* x", "the comment at byte 0 is not closed"},
		{"{{/* x */ .a}}", "the comment at byte 0 is followed by more"},
		{strings.Repeat("x", maxLen+1), "longer than 4096 bytes"},
	} {
		_, err := Parse(c.tmpl)
		require.Error(t, err, c.tmpl)
		assert.Contains(t, err.Error(), c.want, c.tmpl)
		assert.NotContains(t, err.Error(), "\n", c.tmpl)
	}
}

// A template of the largest size over a body of the largest size, each
// action deep in the body or printing all of it, renders within bounds:
// every action prints at most MaxOutput bytes, and each object's keys
// are sorted once.
func TestRenderHook_Bounded(t *testing.T) {
	var body strings.Builder
	depth := 500
	body.WriteString(strings.Repeat(`{"a":`, depth))
	body.WriteString(`{"leaf": "x", "wide": {`)
	for i := range 40000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `"k%05d":1`, i)
	}
	body.WriteString(`}}` + strings.Repeat("}", depth))
	require.Less(t, body.Len(), 1024<<10, "hooks.<name>.max_body_kb is at most 1024")
	data, err := ParseBody([]byte(body.String()))
	require.NoError(t, err)

	deep := "{{." + strings.Repeat("a.", depth) + "leaf}}"
	tp, err := Parse(deep)
	require.NoError(t, err)
	out, err := tp.Render(data)
	require.NoError(t, err)
	assert.Equal(t, "x", out)

	wide := strings.Repeat("{{. | trunc 1}}", maxLen/len("{{. | trunc 1}}"))
	tp, err = Parse(wide)
	require.NoError(t, err)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	out, err = tp.Render(data)
	goruntime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("{", maxLen/len("{{. | trunc 1}}")), out)
	// Each action prints at most MaxOutput of the 500 KB object, and
	// its keys are sorted once: the work is bounded by the output limit,
	// not the body. Counted in bytes allocated, which the machine's speed
	// or load cannot move: 9.9 MB here, natively and under -race, where
	// printing the whole object each time would take ~130 MB.
	t.Logf("rendering %d actions allocated %d KB", strings.Count(wide, "{{"), (after.TotalAlloc-before.TotalAlloc)>>10)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))

	tp, err = Parse("{{.}}")
	require.NoError(t, err)
	_, err = tp.Render(data)
	require.ErrorIs(t, err, errRenderOutput)
}

func TestParseHookBody(t *testing.T) {
	for _, bad := range []string{`{`, `{"a": 1} {"b": 2}`, `nope`, `{"a": }`} {
		_, err := ParseBody([]byte(bad))
		assert.Error(t, err, bad)
	}
	v, err := ParseBody([]byte(" \n"))
	require.NoError(t, err)
	assert.Nil(t, v)
}

func FuzzTemplate(f *testing.F) {
	f.Add("{{.repository.full_name}}: {{.action}}", `{"repository": {"full_name": "o/r"}, "action": "x"}`)
	f.Add(`{{. | json | trunc 10}};{{.a.1.b | default "n"}}`, `{"a": [1, {"b": null}], "c": "d"}`)
	f.Add(`{{- .0 -}} {{/* c */}} {{.1 | default "a\"\\"}}`, `[1, 2]`)
	f.Add(`{{range 10}}{{break}}{{end}}{{printf "%v %q" . .x}}`, `"s"`)
	f.Add(`{{.x | trunc 3 | json | default "" }}`, `{"x": "\u00e9\u00e9\u00e9\u00e9"}`)
	f.Fuzz(func(t *testing.T, tmpl, body string) {
		tp, err := Parse(tmpl)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n")
			return
		}
		again, err := Parse(tmpl)
		require.NoError(t, err)
		assert.Equal(t, tp, again)
		data, err := ParseBody([]byte(body))
		if err != nil {
			return
		}
		out, err := tp.Render(data)
		out2, err2 := tp.Render(data)
		assert.Equal(t, out, out2, "a render is deterministic")
		assert.Equal(t, err, err2)
		if err == nil {
			assert.LessOrEqual(t, len(out), MaxOutput)
			assert.NotEmpty(t, strings.TrimSpace(out))
		}
	})
}
