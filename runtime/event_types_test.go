package runtime

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
)

// sampleEvents has one event of every type with all of its fields set, so
// that a type AppendJSON or DecodeEvent forgets comes back different, and
// so that docs/reference/events.md (TestEventsReference) lists every key
// AppendJSON writes.
var sampleEvents = map[EventType]Event{
	EvSessionStart: {Agent: "assistant", OnDisconnect: "continue", Gateway: "telegram", ChatID: "42",
		Spawn:     &Spawn{Parent: "session_p", Call: "c9", Depth: 1, Ceiling: []string{"boss"}, Workspace: WorkspaceParent},
		Principal: agents.Principal{Kind: agents.KindWebhook, ID: "github"}},
	EvUserMessage: {Content: "hi \"there\"\n", SenderID: "telegram:1", SenderName: "Ada", Passive: true, Steering: true,
		Origin: "schedule"},
	EvSilentMessage: {Content: "Bob: later", SenderID: "7", SenderName: "Bob"},
	EvAssistant: {Agent: "assistant", Content: "ok", Origin: "heartbeat",
		Usage:     Usage{PromptTokens: 10, CompletionTokens: 2, CacheReadTokens: 4, CacheWriteTokens: 3, ReasoningTokens: 1},
		ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}},
		Thinking:  []ThinkingBlock{{Text: "hm", Signature: "sig"}, {Redacted: "opaque"}}},
	EvToolCall:         {CallID: "c1", ToolName: "bash", Arguments: `{"command":"ls"}`},
	EvToolResult:       {CallID: "c1", ToolName: "bash", Success: true, Content: "a\nb", Details: []byte(`{"exit_code":0}`)},
	EvApprovalRequired: {CallID: "c1", ToolName: "bash", Content: "rm -rf x"},
	EvApprovalDecision: {CallID: "c1", Decision: AllowAlways, Reason: "user"},
	EvError:            {Code: "model_not_found", Content: "run ollama pull x"},
	EvTurnEnd: {Reason: TurnCompleted,
		Usage: Usage{PromptTokens: 12, CompletionTokens: 3, CacheReadTokens: 5, CacheWriteTokens: 2, ReasoningTokens: 1}},
	EvSessionEnd:   {Reason: "deleted"},
	EvToken:        {Content: "Hel"},
	EvToolProgress: {CallID: "c1", ToolName: "worker", Content: "editing main.go"},
	EvHistoryCompaction: {Content: "Ada asked about milk.",
		Usage:      Usage{PromptTokens: 90, CompletionTokens: 8, CacheReadTokens: 30, CacheWriteTokens: 20, ReasoningTokens: 4},
		Compaction: &Compaction{Upto: 7, Method: CompactSummary, CoversFrom: 1, CoversTo: 6, TokensBefore: 900, TokensAfter: 200}},
}

// Every EventType constant is in the table, once, with what it means.
func TestEventTypes_Declared(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "event.go", nil, 0)
	require.NoError(t, err)
	var consts []EventType
	for name, value := range eventTypeConsts(f) {
		consts = append(consts, value)
		assert.True(t, strings.HasPrefix(name, "Ev"), "%s: event type constants are named Ev...", name)
	}
	var table []EventType
	for _, info := range EventTypes() {
		table = append(table, info.Type)
		assert.NotEmpty(t, info.Doc, "%s: say what it means", info.Type)
		assert.Equal(t, info.Type != EvToken && info.Type != EvToolProgress, (&Event{Type: info.Type}).Durable(), "%s", info.Type)
	}
	assert.ElementsMatch(t, consts, table, "event.go's EventType constants and eventTypes (event_types.go)")
	assert.Len(t, table, len(slices.Compact(slices.Sorted(slices.Values(table)))), "a type is listed twice")
}

// Every type survives the log: AppendJSON then DecodeEvent gives it back.
func TestEventTypes_LogRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123, time.UTC)
	var p fastjson.Parser
	for i, info := range EventTypes() {
		t.Run(string(info.Type), func(t *testing.T) {
			e, ok := sampleEvents[info.Type]
			require.True(t, ok, "add a sample of %s to sampleEvents", info.Type)
			e.Type, e.Time = info.Type, at
			if info.Durable {
				e.Seq = uint64(i + 1)
			}
			data := e.AppendJSON(nil)
			back, err := DecodeEvent(&p, data)
			require.NoError(t, err, "DecodeEvent does not know %s", info.Type)
			assert.Equal(t, e, back, "AppendJSON or DecodeEvent leaves out a field of %s: %s", info.Type, data)
		})
	}
}

// Every switch on event types in the module names every type in its
// cases: those it acts on, and those it deliberately ignores, listed in a
// case of their own (empty, with a comment saying why, or falling through
// to a shared branch). A default clause does not count: it cannot say
// which types it swallows, so a new type would slip into it unseen. The
// compiler does not check this; this test does, so a new type cannot be
// forgotten in a renderer, an encoder or a gateway.
func TestEventTypes_Switches(t *testing.T) {
	names, all := allEventTypes(t)
	root := testenv.ModuleRoot(t)
	fset := token.NewFileSet()
	found := map[string]int{} // switches per folder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, p := range checkEventSwitches(fset, file, rel, rel == filepath.Join("runtime", filepath.Base(rel)), names, all) {
			found[filepath.Dir(rel)]++
			if p != "" {
				t.Error(p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	for _, dir := range []string{"runtime", filepath.Join("lite", "httpapi"), filepath.Join("cmd", "agnx-lite")} {
		assert.NotZero(t, found[dir], "the walk found no switch on event types in %s: it does not see the module", dir)
	}
}

// The check itself: it finds the switch that forgets a type, the one that
// leaves types to its default clause, and the empty case that does not
// say why; it passes the switch that lists every type.
func TestCheckEventSwitches(t *testing.T) {
	const src = `package x

import rt "github.com/agnx-lite/agnx-lite/runtime"

func f(e rt.Event) int {
	switch e.Type {
	case rt.EvToken:
		return 1
	case rt.EvError, rt.EvTurnEnd:
		// not here: ends are handled by the caller
	}
	switch e.Type {
	case rt.EvToken:
		return 1
	default:
		return 2
	}
	switch e.Type {
	case rt.EvToken:
	case rt.EvError, rt.EvTurnEnd:
		fallthrough
	default:
		return 3
	}
	switch e.Type {
	case "x":
		return 4
	}
	return 0
}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x/x.go", src, parser.ParseComments)
	require.NoError(t, err)
	names := map[string]EventType{"EvToken": EvToken, "EvError": EvError, "EvTurnEnd": EvTurnEnd, "EvUserMessage": EvUserMessage}
	all := []EventType{EvError, EvToken, EvTurnEnd, EvUserMessage}
	got := checkEventSwitches(fset, file, "x/x.go", false, names, all)
	assert.Equal(t, []string{
		"x/x.go:6: switch on event types leaves out user_message: list them in a case of their own (empty with a comment saying why they do not matter here, or falling through to a shared branch); a default clause does not count",
		"x/x.go:12: switch on event types leaves out error, turn_end, user_message: list them in a case of their own (empty with a comment saying why they do not matter here, or falling through to a shared branch); a default clause does not count",
		"x/x.go:18: switch on event types leaves out user_message: list them in a case of their own (empty with a comment saying why they do not matter here, or falling through to a shared branch); a default clause does not count",
		"x/x.go:19: empty case of a switch on event types: say in a comment why token does not matter here",
	}, got, "the fourth switch names no event type: not checked")

	src2 := strings.Replace(src, "rt.EvTurnEnd:", "rt.EvTurnEnd, rt.EvUserMessage:", -1)
	file, err = parser.ParseFile(fset, "x/x.go", src2, parser.ParseComments)
	require.NoError(t, err)
	got = checkEventSwitches(fset, file, "x/x.go", false, names, all)
	assert.Equal(t, []string{
		"",
		"x/x.go:12: switch on event types leaves out error, turn_end, user_message: list them in a case of their own (empty with a comment saying why they do not matter here, or falling through to a shared branch); a default clause does not count",
		"",
		"x/x.go:19: empty case of a switch on event types: say in a comment why token does not matter here",
	}, got)
}

// allEventTypes returns event.go's constants by name, and every type:
// the constants and the table of event_types.go, sorted
// (TestEventTypes_Declared checks they agree; a constant added without a
// row still counts here, and so does a row without a constant).
func allEventTypes(t *testing.T) (map[string]EventType, []EventType) {
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	require.NoError(t, err)
	names := eventTypeConsts(f)
	var all []EventType
	for _, v := range names {
		all = append(all, v)
	}
	for _, info := range EventTypes() {
		all = append(all, info.Type)
	}
	slices.Sort(all)
	return names, slices.Compact(all)
}

// checkEventSwitches returns one entry per switch in file whose cases name
// an event type: "" when it is complete, else what is wrong, as
// "file:line: ..."; an empty case without a comment adds one more entry.
// inRuntime says file is in package runtime, where the constants are
// bare (EvToken); elsewhere they are qualified by the name the file
// imports runtime under.
func checkEventSwitches(fset *token.FileSet, file *ast.File, name string, inRuntime bool, names map[string]EventType, all []EventType) []string {
	qual := runtimeImportName(file)
	if !inRuntime && qual == "" {
		return nil
	}
	at := func(p token.Pos) string { return fmt.Sprintf("%s:%d", name, fset.Position(p).Line) }
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok || sw.Tag == nil {
			return true
		}
		listed := map[EventType]bool{}
		var emptyCases []string
		for _, st := range sw.Body.List {
			cc := st.(*ast.CaseClause)
			var here []string
			for _, x := range cc.List {
				if ty, ok := eventConst(x, names, inRuntime, qual); ok {
					listed[ty] = true
					here = append(here, string(ty))
				}
			}
			if len(here) > 0 && len(cc.Body) == 0 && !hasComment(file, cc, sw) {
				verb := "does"
				if len(here) > 1 {
					verb = "do"
				}
				emptyCases = append(emptyCases, fmt.Sprintf("%s: empty case of a switch on event types: say in a comment why %s %s not matter here",
					at(cc.Pos()), strings.Join(here, ", "), verb))
			}
		}
		if len(listed) == 0 {
			return true
		}
		var missing []string
		for _, ty := range all {
			if !listed[ty] {
				missing = append(missing, string(ty))
			}
		}
		verdict := ""
		if len(missing) > 0 {
			verdict = fmt.Sprintf("%s: switch on event types leaves out %s: list them in a case of their own (empty with a comment saying why they do not matter here, or falling through to a shared branch); a default clause does not count",
				at(sw.Pos()), strings.Join(missing, ", "))
		}
		out = append(out, verdict)
		out = append(out, emptyCases...)
		return true
	})
	return out
}

// eventConst reports whether x names an event type constant: EvX inside
// package runtime, qual.EvX elsewhere.
func eventConst(x ast.Expr, names map[string]EventType, inRuntime bool, qual string) (EventType, bool) {
	var name string
	switch x := x.(type) {
	case *ast.Ident:
		if inRuntime {
			name = x.Name
		}
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && qual != "" && pkg.Name == qual {
			name = x.Sel.Name
		}
	}
	ty, ok := names[name]
	return ty, ok
}

// runtimeImportName is the name file imports package runtime under, ""
// when it does not.
func runtimeImportName(file *ast.File) string {
	for _, imp := range file.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "github.com/agnx-lite/agnx-lite/runtime" {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "runtime"
	}
	return ""
}

// eventTypeConsts maps the name of every constant of type EventType in f
// to its value.
func eventTypeConsts(f *ast.File) map[string]EventType {
	out := map[string]EventType{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "EventType" {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				out[name.Name] = EventType(v)
			}
		}
	}
	return out
}

// hasComment reports whether a comment sits inside the case clause cc
// (which ends where the next clause or the switch does).
func hasComment(f *ast.File, cc *ast.CaseClause, sw *ast.SwitchStmt) bool {
	end := sw.Body.Rbrace
	for _, st := range sw.Body.List {
		if st.Pos() > cc.Pos() && st.Pos() < end {
			end = st.Pos()
		}
	}
	for _, cg := range f.Comments {
		if cg.Pos() > cc.Pos() && cg.Pos() < end {
			return true
		}
	}
	return false
}
