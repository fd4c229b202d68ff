package lite

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
	"unicode/utf8"
)

// A hook's template is the operator's, its data the caller's: the body of
// an authenticated request, which may still be hostile (a leaked secret, a
// compromised CI). Rendering is bounded three ways. At load, the template
// may not define or call templates (no recursion) nor use call (no
// functions from the data). At run time, every action and every range
// iteration first runs a tick (inserted into the parse tree at load) that
// fails past hookRenderTimeout or hookMaxSteps, so that no loop, however
// nested, runs for long; and the output stops at hookMaxOutput.
const (
	hookMaxOutput     = 16 << 10
	hookRenderTimeout = 250 * time.Millisecond
	hookMaxSteps      = 100_000
	tickFunc          = "_tick"
)

var (
	errRenderTime   = errors.New("it took longer than 250 ms: simplify the template")
	errRenderSteps  = errors.New("it ran more than 100,000 steps: simplify the template")
	errRenderOutput = fmt.Errorf("its output is over %d KiB: print less (trunc N cuts a value)", hookMaxOutput>>10)
)

// hookFuncs are the functions templates get besides the builtins.
var hookFuncs = template.FuncMap{
	"json":    hookJSON,
	"default": hookDefault,
	"trunc":   hookTrunc,
	tickFunc:  func() (string, error) { return "", nil }, // replaced at each render
}

// hookJSON renders v as compact JSON.
func hookJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// hookDefault returns v unless it is empty (missing, null, "", 0, false,
// an empty list or object), else def: {{.action | default "push"}}.
func hookDefault(def, v any) any {
	if v == nil {
		return def
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
		if rv.Len() == 0 {
			return def
		}
	default:
		if rv.IsZero() {
			return def
		}
	}
	return v
}

// hookTrunc cuts v, printed, to at most n characters: {{.title | trunc 80}}.
func hookTrunc(n int, v any) string {
	s, ok := v.(string)
	if !ok {
		if v == nil {
			return ""
		}
		s = fmt.Sprint(v)
	}
	if n < 0 {
		n = 0
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// parseHookTemplate parses a hook's template and readies it for
// renderHook. Its error is one sentence saying what is wrong.
func parseHookTemplate(name, src string) (*template.Template, error) {
	if len(src) > maxHookTemplateLen {
		return nil, fmt.Errorf("the template is longer than %d bytes: shorten it", maxHookTemplateLen)
	}
	t, err := template.New(name).Option("missingkey=zero").Funcs(hookFuncs).Parse(src)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(t.Templates()) > 1 || t.Tree == nil {
		return nil, errors.New("define and block are not allowed: write the message in one template")
	}
	if err := checkHookNode(t.Tree.Root); err != nil {
		return nil, err
	}
	addTicks(t.Tree.Root, false)
	return t, nil
}

// checkHookNode refuses template calls and the call builtin anywhere.
func checkHookNode(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := checkHookNode(c); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return errors.New("{{template}} is not allowed: write the message in one template")
	case *parse.ActionNode:
		return checkHookNode(n.Pipe)
	case *parse.IfNode:
		return checkBranch(&n.BranchNode)
	case *parse.RangeNode:
		return checkBranch(&n.BranchNode)
	case *parse.WithNode:
		return checkBranch(&n.BranchNode)
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				if err := checkHookNode(a); err != nil {
					return err
				}
			}
		}
	case *parse.ChainNode:
		return checkHookNode(n.Node)
	case *parse.IdentifierNode:
		if n.Ident == "call" || n.Ident == tickFunc {
			return fmt.Errorf("%s is not allowed in a hook's template", n.Ident)
		}
	}
	return nil
}

func checkBranch(b *parse.BranchNode) error {
	for _, n := range []parse.Node{b.Pipe, b.List, b.ElseList} {
		if err := checkHookNode(n); err != nil {
			return err
		}
	}
	return nil
}

// addTicks puts a call of the tick before every node of l that is not
// text, and at the start of l when it is a range's body (an empty body
// still iterates).
func addTicks(l *parse.ListNode, loop bool) {
	if l == nil {
		return
	}
	out := make([]parse.Node, 0, 2*len(l.Nodes)+1)
	if loop {
		out = append(out, tick(l.Pos))
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			out = append(out, n)
			continue
		case *parse.IfNode:
			addTicks(n.List, false)
			addTicks(n.ElseList, false)
		case *parse.WithNode:
			addTicks(n.List, false)
			addTicks(n.ElseList, false)
		case *parse.RangeNode:
			addTicks(n.List, true)
			addTicks(n.ElseList, false)
		}
		out = append(out, tick(n.Position()), n)
	}
	l.Nodes = out
}

// tick is the action {{_tick}}, which prints nothing.
func tick(pos parse.Pos) parse.Node {
	id := parse.NewIdentifier(tickFunc).SetPos(pos)
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: pipe}
}

// renderHook executes t over data within the limits above. The error is
// one sentence for a 422.
func renderHook(t *template.Template, data any, now func() time.Time) (out string, err error) {
	deadline := now().Add(hookRenderTimeout)
	steps := 0
	run, err := t.Clone()
	if err != nil {
		return "", fmt.Errorf("the template could not be prepared: %v", err)
	}
	run.Funcs(template.FuncMap{tickFunc: func() (string, error) {
		steps++
		switch {
		case steps > hookMaxSteps:
			return "", errRenderSteps
		case now().After(deadline):
			return "", errRenderTime
		}
		return "", nil
	}})
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("the template failed on this body: %v", r)
		}
	}()
	w := &limitedBuilder{max: hookMaxOutput}
	if err := run.Execute(w, data); err != nil {
		return "", renderError(err)
	}
	if strings.TrimSpace(w.b.String()) == "" {
		return "", errors.New("the template made an empty message of this body: check the field names it uses")
	}
	return w.b.String(), nil
}

// renderError makes one sentence of an execution error.
func renderError(err error) error {
	for _, e := range []error{errRenderTime, errRenderSteps, errRenderOutput} {
		if errors.Is(err, e) || strings.Contains(err.Error(), e.Error()) {
			return fmt.Errorf("the template failed on this body: %w", e)
		}
	}
	msg := strings.TrimPrefix(err.Error(), "template: ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Errorf("the template failed on this body: %s", msg)
}

// limitedBuilder collects up to max bytes and fails past them.
type limitedBuilder struct {
	b   strings.Builder
	max int
}

func (w *limitedBuilder) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		return 0, errRenderOutput
	}
	return w.b.Write(p)
}
