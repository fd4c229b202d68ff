package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// Every switch on event types in the module lists every type or has a
// default clause that says (with code or a comment) what happens to the
// others. The compiler does not check this; this test does, so a new type
// cannot be forgotten in a renderer, an encoder or a gateway.
func TestEventTypes_Switches(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "event.go", nil, 0)
	require.NoError(t, err)
	names := map[string]EventType{}
	for name, value := range eventTypeConsts(f) {
		names[name] = value
	}
	all := len(EventTypes())
	root := moduleRoot(t)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		inRuntime := file.Name.Name == "runtime" && filepath.Dir(path) == filepath.Join(root, "runtime")
		ast.Inspect(file, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			listed, dflt := switchCases(sw, names, inRuntime)
			if len(listed) == 0 {
				return true
			}
			found++
			pos := fset.Position(sw.Pos())
			rel, _ := filepath.Rel(root, pos.Filename)
			if len(listed) == all {
				return true
			}
			var missing []string
			for _, info := range EventTypes() {
				if !listed[info.Type] {
					missing = append(missing, string(info.Type))
				}
			}
			switch {
			case dflt == nil:
				t.Errorf("%s:%d: switch on event types leaves out %s: list them, or add a default clause saying why they do not matter here",
					rel, pos.Line, strings.Join(missing, ", "))
			case len(dflt.Body) == 0 && !hasComment(file, dflt, sw):
				t.Errorf("%s:%d: empty default clause of a switch on event types: say in a comment why %s do not matter here",
					rel, pos.Line, strings.Join(missing, ", "))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, found, 3, "the walk found the switches of AppendJSON, DecodeEvent and state.apply at least")
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

// switchCases returns the event types sw's cases name (as Ev... inside
// package runtime, runtime.Ev... elsewhere) and its default clause.
func switchCases(sw *ast.SwitchStmt, names map[string]EventType, inRuntime bool) (map[EventType]bool, *ast.CaseClause) {
	listed := map[EventType]bool{}
	var dflt *ast.CaseClause
	for _, st := range sw.Body.List {
		cc := st.(*ast.CaseClause)
		if cc.List == nil {
			dflt = cc
		}
		for _, x := range cc.List {
			var name string
			switch x := x.(type) {
			case *ast.Ident:
				if inRuntime {
					name = x.Name
				}
			case *ast.SelectorExpr:
				if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "runtime" {
					name = x.Sel.Name
				}
			}
			if v, ok := names[name]; ok {
				listed[v] = true
			}
		}
	}
	return listed, dflt
}

// hasComment reports whether a comment sits inside the default clause cc
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

func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	require.NoError(t, err, "runtime's parent is the module root")
	return dir
}
