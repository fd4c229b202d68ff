package config

import (
	"github.com/agnx-lite/agnx-lite/ci/golden"
	"github.com/agnx-lite/agnx-lite/ci/testenv"

	"fmt"
	"go/ast"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/workers"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// docs/reference/configuration.md is generated from the code: every key of
// agnx.yaml and agent.yaml with its type and the doc comment of its field
// (read with go/parser), its default from loading files that set nothing
// as the daemon does, and the environment variables agnx-lite reads (the
// env* constants of envDirs). The test fails when the page is stale;
// -update rewrites it.
func TestConfigReference(t *testing.T) {
	golden.Check(t, filepath.Join(testenv.ModuleRoot(t), "docs", "reference", "configuration.md"), configReference(t),
		"go test ./lite/config -run TestConfigReference -update")
}

func configReference(t *testing.T) string {
	src := newGoSource(t, testenv.ModuleRoot(t))
	var b strings.Builder
	b.WriteString("# Configuration\n\n" +
		"Generated from the code by `make docs`; do not edit.\n" +
		"Keys, types and descriptions come from the yaml-tagged structs that decode each file and the doc comments " +
		"of their fields (lite/config/, agents/); defaults from loading files that set nothing, as the daemon does; " +
		"environment variables from the `env` constants of lite, lite/config, lite/upkeep, runtime/llm/ollama and cmd/agnx-lite.\n\n" +
		"- [agnx.yaml](#agnxyaml), the daemon's configuration\n" +
		"- [agent.yaml](#agentyaml), one agent\n" +
		"- [Environment variables](#environment-variables)\n\n" +
		"Every key is optional unless its description says otherwise. A key's default is what it holds when the file " +
		"leaves it out; where a zero value stands for a default applied later, the default shown is that one. " +
		"`<name>` stands for a name you choose (a map's key), `[]` for each entry of a list, `~` for the home folder " +
		"of the user the daemon runs as.\n")

	// agent.yaml is walked first so that agnx.yaml's MCP servers, which
	// are spec.tools entries, refer to its keys rather than repeat them.
	agentRows := src.walk(src.lookup("agents", "agentFile"), "")
	maps.Copy(src.refer, src.expanded)
	b.WriteString("\n## agnx.yaml\n\n" +
		"In the data dir (`agnx-lite init` writes a commented one), or the file given with `-c`. " +
		"Values may use `${VAR}` and `${VAR:-default}` (the environment's, and those of agnx.env in the data dir); " +
		"write `$$` for a dollar. Agnx's duragent.yaml loads too.\n")
	writeKeys(t, &b, src.walk(src.lookup("lite/config", "Config"), ""), configDefaults(t), nil)

	b.WriteString("\n## agent.yaml\n\n" +
		"In each agent's folder, beside its prompt files (SOUL.md, SYSTEM_PROMPT.md, INSTRUCTIONS.md).\n")
	writeKeys(t, &b, agentRows, agentDefaults(t), map[string]bool{"spec": true})

	writeEnv(t, &b, src)
	return b.String()
}

// configDefaults are the defaults of agnx.yaml's keys: what the daemon's
// Locate makes of an empty agnx.yaml in the default data dir, under a home
// folder of the test's own that the page calls ~, and of configSample for
// the entries of lists and maps (the keys the sample writes left out).
func configDefaults(t *testing.T) map[string]string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvDataDir, "")
	dataDir := filepath.Join(home, ".agnx-lite")
	require.NoError(t, os.MkdirAll(dataDir, 0o700))
	file := filepath.Join(dataDir, "agnx.yaml")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg, err := Locate("", "")
	require.NoError(t, err)
	require.Equal(t, file, cfg.File, "Locate reads the data dir's agnx.yaml")
	values := map[string]string{}
	collectDefaults(reflect.ValueOf(*cfg), "", values)
	require.NoError(t, os.WriteFile(file, []byte(configSample), 0o600))
	sample, err := Locate("", "")
	require.NoError(t, err)
	entries := map[string]string{}
	collectDefaults(reflect.ValueOf(*sample), "", entries)
	for path, v := range unwritten(t, configSample, entries) {
		if strings.ContainsAny(path, "[<") {
			values[path] = v
		}
	}

	// Keys whose zero value the code that uses them turns into a default.
	later := map[string]any{
		"world_memory.path":              cfg.WorldMemoryDir(),
		"world_memory.max_file_kb":       memory.DefaultWorldFileBytes >> 10,
		"world_memory.max_total_kb":      memory.DefaultWorldTotalBytes >> 10,
		"world_memory.max_topics":        memory.DefaultWorldTopics,
		"sessions.compaction":            DefaultCompaction,
		"scheduler.max_turns_per_hour":   sched.DefaultMaxTurnsPerHour,
		"tasks.start":                    TasksStartManual,
		"tasks.check_seconds":            int(cfg.Tasks.Interval() / time.Second),
		"subagents.max_depth":            runtime.DefaultSubagentDepth,
		"subagents.max_children":         runtime.DefaultSubagentChildren,
		"subagents.max_tokens":           runtime.DefaultSubagentTokens,
		"gateways.telegram.api_base_url": telegram.DefaultBaseURL,
		"workers.<name>.timeout":         workers.DefaultTimeout,
		"workers.<name>.max_retries":     workers.DefaultMaxRetries,
	}
	for key, v := range later {
		require.Contains(t, []string{"`0`", "—"}, values[key], "%s has a value of its own; it needs no later default", key)
		values[key] = fmtValue(reflect.ValueOf(v))
	}
	for key, v := range values {
		values[key] = strings.ReplaceAll(v, home, "~")
	}
	return values
}

// configSample has one entry of every list and map of agnx.yaml, with the
// keys each needs, so that the defaults of the others show.
const configSample = `gateways:
  external: [{name: example, command: /usr/local/bin/example}]
routes: [{match: {}, agent: assistant}]
mcp:
  servers: [{name: example, command: example-mcp}]
hooks:
  example: {agent: assistant, token: 0123456789abcdef, template: "{{.action}}"}
prices:
  example: {input: 1, output: 2}
workers:
  example: {acp: [example-acp]}
`

// agentDefaults are the defaults of agent.yaml's keys: what agents.Load,
// as the daemon loads an agent, makes of agentSample, the keys it writes
// left out.
func agentDefaults(t *testing.T) map[string]string {
	dir := filepath.Join(t.TempDir(), "example")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, agents.FileName), []byte(agentSample), 0o600))
	a, err := agents.Load(dir)
	require.NoError(t, err)
	require.NotNil(t, a.Heartbeat)
	values := map[string]string{}
	for prefix, v := range map[string]any{"spec.model.": a.Model, "spec.session.": a.Session, "spec.access.": a.Access,
		"spec.memory.": a.Memory, "spec.hooks.": a.Hooks, "spec.notify.": a.Notify} {
		collectDefaults(reflect.ValueOf(v), prefix, values)
	}
	collectValue(reflect.ValueOf(a.Tools), "spec.tools", values)
	values["spec.skills_dir"] = fmtValue(reflect.ValueOf(relTo(t, dir, a.SkillsDir)))
	values["spec.heartbeat.every"] = fmtValue(reflect.ValueOf(a.Heartbeat.Every))
	return unwritten(t, agentSample, values)
}

// agentSample is an agent with the keys it needs, and one entry of every
// list and block whose presence turns something on.
const agentSample = `apiVersion: agnx/v1alpha1
kind: Agent
metadata: {name: example}
spec:
  model: {provider: ollama, name: example}
  memory: {}
  heartbeat: {}
  tools: [{type: builtin, name: bash}]
  hooks:
    before_tool: [{match: bash, type: skip_duplicate}]
    after_tool: [{match: bash, message: example}]
  notify: {deliveries: [{type: log}]}
`

func relTo(t *testing.T, base, path string) string {
	rel, err := filepath.Rel(base, path)
	require.NoError(t, err)
	return rel
}

// collectDefaults records the value of every key of struct v by its path,
// as the walk of the source names it.
func collectDefaults(v reflect.Value, prefix string, out map[string]string) {
	typ := v.Type()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case strings.Contains(opts, "inline"):
			collectDefaults(v.Field(i), prefix, out)
		case name != "":
			collectValue(v.Field(i), prefix+name, out)
		}
	}
}

// collectValue records v as the value of path, and what is below it: the
// keys of a struct, those of a list's first entry and of a map's.
func collectValue(v reflect.Value, path string, out map[string]string) {
	out[path] = fmtValue(v)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.Struct && v.Type().PkgPath() != "time":
		collectDefaults(v, path+".", out)
	case v.Kind() == reflect.Slice && v.Len() > 0:
		collectValue(v.Index(0), path+"[]", out)
	case v.Kind() == reflect.Map && v.Len() > 0 && v.Type().Elem().Kind() != reflect.String:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		collectValue(v.MapIndex(keys[0]), path+".<name>", out)
	}
}

// unwritten returns the values of the keys sample does not write: those
// are the defaults.
func unwritten(t *testing.T, sample string, values map[string]string) map[string]string {
	var doc any
	require.NoError(t, yaml.Unmarshal([]byte(sample), &doc))
	out := map[string]string{}
	for path, v := range values {
		if !written(doc, path) {
			out[path] = v
		}
	}
	return out
}

// written reports whether doc (decoded YAML) has the key at path, taking
// the first entry of lists ([]) and maps (<name>).
func written(doc any, path string) bool {
	cur := doc
	for _, part := range strings.Split(strings.ReplaceAll(path, "[]", ".[]"), ".") {
		switch c := cur.(type) {
		case map[string]any:
			if part == "<name>" {
				keys := slices.Sorted(maps.Keys(c))
				if len(keys) == 0 {
					return false
				}
				cur = c[keys[0]]
				continue
			}
			var ok bool
			if cur, ok = c[part]; !ok {
				return false
			}
		case []any:
			if part != "[]" || len(c) == 0 {
				return false
			}
			cur = c[0]
		default:
			return false
		}
	}
	return true
}

// fmtValue shows a default: — for none (an empty string, list or map, a
// nil pointer), a secret never.
func fmtValue(v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "—"
		}
		v = v.Elem()
	}
	switch {
	case v.Type() == reflect.TypeFor[Secret]():
		return "—"
	case v.Type() == reflect.TypeFor[time.Duration]():
		d := v.Interface().(time.Duration).String() // 30m0s, 1h0m0s
		if strings.HasSuffix(d, "m0s") {
			d = d[:len(d)-2]
		}
		if strings.HasSuffix(d, "h0m") {
			d = d[:len(d)-2]
		}
		return "`" + d + "`"
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return "—"
		}
		return "`" + v.String() + "`"
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return fmt.Sprintf("`%v`", v.Interface())
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 || v.Type().Elem().Kind() == reflect.Struct {
			return "—"
		}
		return fmt.Sprintf("`%v`", v.Interface())
	}
	return ""
}

// envConst matches the name of a constant that names an environment
// variable: env or Env, then a capital.
var envConst = regexp.MustCompile(`^[eE]nv[A-Z]`)

// envDirs are the packages whose env constants name the variables
// agnx-lite reads: the daemon's, its config's, its memory guard's (GOGC),
// its tools' (BRAVE_API_KEY), its providers' keys (lite/agentcache), its
// Ollama client's and the CLI's.
var envDirs = []string{"lite", "lite/config", "lite/upkeep", "lite/toolset", "lite/agentcache", "runtime/llm/ollama", "cmd/agnx-lite"}

// writeEnv lists the environment variables agnx-lite reads: the values of
// the env constants of envDirs that are variable names, with their doc
// comments.
func writeEnv(t *testing.T, b *strings.Builder, src *goSource) {
	b.WriteString("\n## Environment variables\n\n" +
		"What agnx-lite reads from its environment (and from agnx.env in the data dir, which the daemon's service " +
		"and every command read too), besides what agnx.yaml names with `${VAR}`.\n\n" +
		"| variable | what it does |\n| --- | --- |\n")
	type envVar struct{ name, doc string }
	var vars []envVar
	var files []*ast.File
	for _, dir := range envDirs {
		files = append(files, src.pkg(dir).files...)
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok.String() != "const" {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || !envConst.MatchString(name.Name) {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if !regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`).MatchString(v) {
						continue // a constant about env files, not a variable
					}
					docs := vs.Doc
					if docs == nil && len(gd.Specs) == 1 {
						docs = gd.Doc
					}
					doc := strings.TrimSpace(docs.Text() + " " + vs.Comment.Text())
					assert.NotEmpty(t, doc, "%s (%s) has no doc comment: write one, it is the page's description", name.Name, v)
					// "envBraveKey is the key" names the variable, not the constant.
					vars = append(vars, envVar{v, strings.Replace(doc, name.Name, "`"+v+"`", 1)})
				}
			}
		}
	}
	slices.SortFunc(vars, func(a, b envVar) int { return strings.Compare(a.name, b.name) })
	for _, v := range vars {
		fmt.Fprintf(b, "| `%s` | %s |\n", v.name, cell(v.doc))
	}
}
