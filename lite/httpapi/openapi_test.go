package httpapi_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

const openAPIFile = "../../docs/openapi.yaml"

// openAPIDoc is the part of docs/openapi.yaml the test checks.
type openAPIDoc struct {
	OpenAPI    string                    `yaml:"openapi"`
	Paths      map[string]map[string]any `yaml:"paths"`
	Components map[string]map[string]any `yaml:"components"`
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documented lists the operations as ServeMux patterns ("GET /x/{id}"):
// OpenAPI path templates and Go 1.22 patterns write parameters alike.
func (d *openAPIDoc) documented() []string {
	var out []string
	for path, item := range d.Paths {
		for method := range item {
			if slices.Contains(httpMethods, method) {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	data, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	var d openAPIDoc
	require.NoError(t, yaml.Unmarshal(data, &d))
	return &d
}

// TestOpenAPI_MatchesRoutes: every route is documented with its method
// and every documented operation is served.
func TestOpenAPI_MatchesRoutes(t *testing.T) {
	d := loadOpenAPI(t)
	assert.True(t, strings.HasPrefix(d.OpenAPI, "3.1."), "OpenAPI 3.1, got %q", d.OpenAPI)
	routes := httpapi.Routes()
	slices.Sort(routes)
	documented := d.documented()
	for _, r := range routes {
		assert.Contains(t, documented, r, "route %s is not in %s", r, openAPIFile)
	}
	for _, op := range documented {
		assert.Contains(t, routes, op, "%s documents %s, which the server does not serve", openAPIFile, op)
	}
}

// TestOpenAPI_WellFormed: every operation has an id and responses, every
// path parameter is declared, and every $ref resolves.
func TestOpenAPI_WellFormed(t *testing.T) {
	d := loadOpenAPI(t)
	ids := map[string]bool{}
	for path, item := range d.Paths {
		for method, v := range item {
			op, _ := v.(map[string]any)
			if !slices.Contains(httpMethods, method) {
				continue
			}
			id, _ := op["operationId"].(string)
			assert.NotEmpty(t, id, "%s %s has an operationId", method, path)
			assert.False(t, ids[id], "operationId %s is unique", id)
			ids[id] = true
			assert.NotEmpty(t, op["responses"], "%s %s has responses", method, path)
			declared := d.pathParams(item["parameters"]) + d.pathParams(op["parameters"])
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") {
					assert.Contains(t, declared, seg, "%s %s declares %s", method, path, seg)
				}
			}
		}
	}
	data, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	var all any
	require.NoError(t, yaml.Unmarshal(data, &all))
	refs := 0
	walk(all, func(ref string) {
		refs++
		assert.NotNil(t, d.resolve(ref), "$ref %s resolves", ref)
	})
	assert.Greater(t, refs, 50)
}

// pathParams lists the path parameters of a parameters list as "{name}".
func (d *openAPIDoc) pathParams(list any) string {
	items, _ := list.([]any)
	var out string
	for _, it := range items {
		p, _ := it.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			p, _ = d.resolve(ref).(map[string]any)
		}
		if p["in"] == "path" {
			out += "{" + p["name"].(string) + "}"
		}
	}
	return out
}

// resolve finds "#/components/<kind>/<name>", or nil.
func (d *openAPIDoc) resolve(ref string) any {
	parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
	if len(parts) != 2 || !strings.HasPrefix(ref, "#/components/") {
		return nil
	}
	return d.Components[parts[0]][parts[1]]
}

func walk(v any, ref func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				ref(s)
				continue
			}
			walk(e, ref)
		}
	case []any:
		for _, e := range x {
			walk(e, ref)
		}
	}
}

// TestOpenAPI_ProblemTypes: the problem types the server answers match the
// pattern the document gives, and the refusals are documented as Agnx
// answers them (401 with no body, 403 text on admin routes).
func TestOpenAPI_ProblemTypes(t *testing.T) {
	d := loadOpenAPI(t)
	problem, _ := d.Components["schemas"]["Problem"].(map[string]any)
	props, _ := problem["properties"].(map[string]any)
	typ, _ := props["type"].(map[string]any)
	pattern, _ := typ["pattern"].(string)
	re := regexp.MustCompile(pattern)

	e := newAPIEnv(t, llmtest.Echo())
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/sessions/nope", ""},                  // 404
		{"GET", "/api/v1/sessions/nope/messages?limit=x", ""}, // 400
		{"POST", "/api/v1/sessions", `{"agent":5}`},           // 422
		{"PUT", "/api/v1/sessions", ""},                       // 405
	} {
		var p problemJSON
		require.NoError(t, jsonDecode(e.do(c.method, c.path, c.body), &p))
		assert.Regexp(t, re, p.Type, "%s %s", c.method, c.path)
	}

	responses := d.Components["responses"]
	unauthorized, _ := responses["Unauthorized"].(map[string]any)
	assert.NotContains(t, unauthorized, "content", "a 401 has no body")
	denied, _ := responses["AdminDenied"].(map[string]any)
	content, _ := denied["content"].(map[string]any)
	assert.Contains(t, content, "text/plain")
}
