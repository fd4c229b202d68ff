package lite

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

func render(t *testing.T, tmpl, body string) (string, error) {
	t.Helper()
	tp, err := parseHookTemplate("h", tmpl)
	require.NoError(t, err)
	data, err := parseHookBody([]byte(body))
	require.NoError(t, err)
	return renderHook(tp, data, time.Now)
}

func TestRenderHook(t *testing.T) {
	const push = `{"repository": {"full_name": "o/r", "id": 123456789}, "action": "opened", "commits": [{"id": "a"}, {"id": "b"}],
		"title": "a long title here", "empty": ""}`
	for _, c := range []struct{ tmpl, body, want string }{
		{"{{.repository.full_name}}: {{.action}}", push, "o/r: opened"},
		{"id {{.repository.id}}", push, "id 123456789"}, // numbers as written, not 1.23456789e+08
		{"{{range .commits}}{{.id}},{{end}}", push, "a,b,"},
		{`{{.missing | default "none"}} {{.empty | default "e"}} {{.action | default "x"}}`, push, "none e opened"},
		{"{{.title | trunc 6}}", push, "a long"},
		{"{{json .commits}}", push, `[{"id":"a"},{"id":"b"}]`},
		{"got {{.}}", `"just a string"`, "got just a string"},
		{"{{index . 1}}", `[1, 2, 3]`, "2"},
		{"ping {{len .}}", `{}`, "ping 0"},
		{"static", ``, "static"},
	} {
		got, err := render(t, c.tmpl, c.body)
		require.NoError(t, err, c.tmpl)
		assert.Equal(t, c.want, got, c.tmpl)
	}
}

func TestRenderHook_Errors(t *testing.T) {
	for _, c := range []struct{ tmpl, body, want string }{
		{"{{.repository.full_name}}", `{"repository": "flat"}`, "the template failed on this body"},
		{"{{.a.b}}", `{}`, "the template failed on this body"},
		{"{{.missing}}{{/* nothing */}}", `{}`, ""}, // "<no value>" is not empty
		{"{{if .x}}y{{end}}", `{}`, "made an empty message"},
		{`{{range .a}}{{printf "%0999999d" 1}}{{end}}`, `{"a": [1, 2]}`, "over 16 KiB"},
	} {
		_, err := render(t, c.tmpl, c.body)
		if c.want == "" {
			assert.NoError(t, err, c.tmpl)
			continue
		}
		require.Error(t, err, c.tmpl)
		assert.Contains(t, err.Error(), c.want, c.tmpl)
	}
}

// A loop that prints nothing still stops: at the deadline, checked by the
// tick every iteration runs, or at the step limit.
func TestRenderHook_Bounded(t *testing.T) {
	tp, err := parseHookTemplate("h", "{{range 1000000000}}{{end}}x")
	require.NoError(t, err)
	clock := time.Unix(0, 0)
	fake := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	_, err = renderHook(tp, nil, fake)
	require.ErrorIs(t, err, errRenderTime)

	_, err = renderHook(tp, nil, func() time.Time { return clock }) // time stands still
	require.ErrorIs(t, err, errRenderSteps)

	nested, err := parseHookTemplate("h", `{{range .a}}{{range $.a}}{{if eq (printf "%v" $) ""}}{{end}}{{end}}{{end}}`)
	require.NoError(t, err)
	big := `{"a": [` + strings.Repeat("1,", 20000) + `1]}`
	data, err := parseHookBody([]byte(big))
	require.NoError(t, err)
	start := time.Now()
	_, err = renderHook(nested, data, time.Now)
	require.ErrorIs(t, err, errRenderTime)
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestParseHookBody(t *testing.T) {
	for _, bad := range []string{`{`, `{"a": 1} {"b": 2}`, `nope`, `{"a": }`} {
		_, err := parseHookBody([]byte(bad))
		assert.Error(t, err, bad)
	}
	v, err := parseHookBody([]byte(" \n"))
	require.NoError(t, err)
	assert.Nil(t, v)
}

func FuzzTemplate(f *testing.F) {
	f.Add("{{.repository.full_name}}: {{.action}}", `{"repository": {"full_name": "o/r"}, "action": "x"}`)
	f.Add(`{{range $i, $e := .}}{{$i}}={{json $e | trunc 10}};{{end}}`, `{"a": [1, {"b": null}], "c": "d"}`)
	f.Add(`{{with .a}}{{.b | default "n"}}{{else}}none{{end}}`, `[1, 2]`)
	f.Add(`{{range 10}}{{break}}{{end}}{{printf "%v %q" . .x}}`, `"s"`)
	f.Add(`{{define "x"}}{{template "x" .}}{{end}}{{template "x" .}}`, `{}`)
	f.Fuzz(func(t *testing.T, tmpl, body string) {
		tp, err := parseHookTemplate("f", tmpl)
		if err != nil {
			return
		}
		data, err := parseHookBody([]byte(body))
		if err != nil {
			return
		}
		out, err := renderHook(tp, data, time.Now)
		if err == nil {
			assert.LessOrEqual(t, len(out), hookMaxOutput)
			assert.NotEmpty(t, strings.TrimSpace(out))
		}
	})
}

func FuzzHookBody(f *testing.F) {
	f.Add([]byte(`{"repository": {"full_name": "o/r"}, "action": "opened"}`), "sha256=00", "d-1", "application/json")
	f.Add([]byte(`[1, "two", {"3": null}]`), "", "", "")
	f.Add([]byte(`"text"`), "sha1=abc", "x y", "text/plain")
	f.Add([]byte("{\"a\": 1e999}"), "sha256=", strings.Repeat("i", 200), "application/vnd.github+json")
	c := HookConfig{Agent: "a", Secret: hookSecret, Template: `{{.repository.full_name | default "?"}}: {{.action}} {{json .}}`}
	cfg := &Config{Hooks: map[string]HookConfig{"h": c}}
	require.NoError(f, cfg.validateHooks())
	c = cfg.Hooks["h"]
	f.Fuzz(func(t *testing.T, body []byte, sig, delivery, ct string) {
		header := http.Header{}
		header.Set("X-Hub-Signature-256", sig)
		header.Set("X-GitHub-Delivery", delivery)
		header.Set("Content-Type", ct)
		assert.NotEmpty(t, hookAuth(&c, header, body), "a made-up signature never passes")
		if id, problem := deliveryID(&c, header); problem == "" {
			assert.LessOrEqual(t, len(id), maxDeliveryID)
		}
		text, err := hookMessage(&c, header, body, time.Now)
		if err != nil {
			var he *httpapi.HookError
			require.ErrorAs(t, err, &he)
			assert.Contains(t, []int{400, 415, 422}, he.Status)
			return
		}
		assert.LessOrEqual(t, len(text), hookMaxOutput)
	})
}
