package workers

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// readings are what the supervising agent's policy is asked about an
// ACP permission request: every thing the request would do, judged by
// what it carries (the command in its raw input, the paths it names, a
// title that is a command), not by the kind it declares, which the worker
// chooses: a "read" whose raw input holds "rm -rf ~" is a bash call.
// Each reading is a call of the tool of ours that would do the same (bash
// for a command, write_file for a path that may be written, web for an
// address, read_file for a path that is only read); a request of no known
// kind is also asked as the worker's own name with its title, which a
// policy rarely names, so a person decides. runtime.AskAll denies the
// request when any reading is denied. They come most dangerous first, as
// AskAll asks a person about the first that needs one.
func readings(worker, inside string, tc acp.ToolCallUpdate) []runtime.Question {
	title := ""
	if tc.Title != nil {
		title = *tc.Title
	}
	kind := acp.ToolKindOther
	if tc.Kind != nil {
		kind = *tc.Kind
	}
	in, _ := tc.RawInput.(map[string]any)
	var r questions
	for _, c := range commands(tc.RawInput) {
		r.add("bash", c)
	}
	if c := codeSpan(title); c != "" {
		r.add("bash", c) // how agents title a command: "`rm -rf build`"
	}
	if (kind == acp.ToolKindExecute || runsTerminal(tc)) && !r.has("bash") {
		r.add("bash", title)
	}
	readOnly := (kind == acp.ToolKindRead || kind == acp.ToolKindSearch) && !carriesWrite(tc, in)
	for _, p := range locations(tc, in, inside) {
		if readOnly {
			r.add("read_file", p)
		} else {
			r.add("write_file", p) // edit, delete, move, or a kind that does not say: the worse reading
		}
	}
	for _, k := range []string{"url", "uri"} {
		r.add("web", str(in, k))
	}
	switch kind {
	case acp.ToolKindFetch:
		if !r.has("web") {
			r.add("web", first(str(in, "query"), title))
		}
	case acp.ToolKindRead, acp.ToolKindSearch:
		if !r.has("read_file") && !r.has("write_file") {
			r.add("read_file", first(str(in, "pattern"), title))
		}
	case acp.ToolKindExecute, acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
	default:
		r.add(worker, title)
	}
	if len(r.qs) == 0 {
		r.qs = append(r.qs, runtime.Question{Tool: worker, Subject: title}) // an edit that names nothing: a person decides
	}
	slices.SortStableFunc(r.qs, func(a, b runtime.Question) int { return danger(a.Tool) - danger(b.Tool) })
	return r.qs
}

// questions collects distinct readings, at most maxReadings.
type questions struct{ qs []runtime.Question }

// maxReadings bounds the readings of one request (runtime.AskAll's
// bound); a request that names more is asked about its first ones, and
// its kind's worse reading is among them.
const maxReadings = 64

func (r *questions) add(tool, subject string) {
	q := runtime.Question{Tool: tool, Subject: subject}
	if subject == "" || len(r.qs) == maxReadings || slices.Contains(r.qs, q) {
		return
	}
	r.qs = append(r.qs, q)
}

func (r *questions) has(tool string) bool {
	return slices.ContainsFunc(r.qs, func(q runtime.Question) bool { return q.Tool == tool })
}

// danger orders readings: a command, a write, the network, a read, then
// the worker's own name.
func danger(tool string) int {
	switch tool {
	case "bash":
		return 0
	case "write_file":
		return 1
	case "web":
		return 2
	case "read_file":
		return 3
	}
	return 4
}

// commands are the shell commands a request's raw input holds, whatever
// its kind: under "command", "cmd", "script" or "shell" (a string, or an
// argv), or the raw input itself when it is a bare string.
func commands(raw any) []string {
	if s, ok := raw.(string); ok {
		return []string{s}
	}
	in, _ := raw.(map[string]any)
	var out []string
	for _, k := range []string{"command", "cmd", "script", "shell"} {
		switch c := in[k].(type) {
		case string:
			out = append(out, c)
		case []any:
			parts := make([]string, 0, len(c))
			for _, p := range c {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

// codeSpan is the text of a title that is one code span ("`make
// test`"), "" otherwise.
func codeSpan(title string) string {
	t := strings.TrimSpace(title)
	if len(t) < 3 || t[0] != '`' || t[len(t)-1] != '`' {
		return ""
	}
	inner := t[1 : len(t)-1]
	if strings.Contains(inner, "`") {
		return ""
	}
	return strings.TrimSpace(inner)
}

// runsTerminal reports whether the request shows a terminal: it runs a
// command.
func runsTerminal(tc acp.ToolCallUpdate) bool {
	return slices.ContainsFunc(tc.Content, func(c acp.ToolCallContent) bool { return c.Terminal != nil })
}

// carriesWrite reports whether the request carries what only a write needs: a
// diff, or new text or a destination in its raw input.
func carriesWrite(tc acp.ToolCallUpdate, in map[string]any) bool {
	if slices.ContainsFunc(tc.Content, func(c acp.ToolCallContent) bool { return c.Diff != nil }) {
		return true
	}
	for _, k := range []string{"content", "new_string", "old_string", "newText", "new_text", "edits", "patch", "diff",
		"destination", "new_path", "target"} {
		if _, ok := in[k]; ok {
			return true
		}
	}
	return false
}

// locationKeys are where agents put a path in a request's raw input.
var locationKeys = []string{"file_path", "path", "abs_path", "filePath", "absolute_path", "notebook_path",
	"source", "destination", "old_path", "new_path", "target"}

// locations are the paths the request names (its locations, its diffs,
// its raw input), each relative to the folder when under it (as our own
// tools' subjects are).
func locations(tc acp.ToolCallUpdate, in map[string]any, inside string) []string {
	var out []string
	for _, l := range tc.Locations {
		out = append(out, l.Path)
	}
	for _, c := range tc.Content {
		if c.Diff != nil {
			out = append(out, c.Diff.Path)
		}
	}
	for _, k := range locationKeys {
		out = append(out, str(in, k))
	}
	for i, p := range out {
		if r, err := filepath.Rel(inside, p); err == nil && filepath.IsAbs(p) && r != ".." && !strings.HasPrefix(r, "../") {
			out[i] = r
		}
	}
	return out
}

func str(in map[string]any, key string) string {
	s, _ := in[key].(string)
	return s
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// answer picks the option that says what the policy (or the person)
// decided: allowing once never picks an "always" option, and when the
// agent offers nothing of the right kind the call is rejected, or the
// request cancelled when it offers no rejection either.
func answer(decision string, opts []acp.PermissionOption) acp.RequestPermissionOutcome {
	var want []acp.PermissionOptionKind
	switch decision {
	case runtime.AllowAlways:
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowAlways, acp.PermissionOptionKindAllowOnce}
	case runtime.AllowOnce:
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}
	}
	want = append(want, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
	for _, k := range want {
		for _, o := range opts {
			if o.Kind == k {
				return acp.NewRequestPermissionOutcomeSelected(o.OptionId)
			}
		}
	}
	return acp.NewRequestPermissionOutcomeCancelled()
}

// permit asks through ask (runtime.AskAll) and answers the agent; a
// failed ask (the call ended, no loop to ask) rejects.
func permit(ctx context.Context, ask askFunc, qs []runtime.Question, opts []acp.PermissionOption) acp.RequestPermissionOutcome {
	d, err := ask(ctx, qs)
	if err != nil {
		if ctx.Err() != nil {
			return acp.NewRequestPermissionOutcomeCancelled()
		}
		d = runtime.DenyCall
	}
	return answer(d, opts)
}

type askFunc func(context.Context, []runtime.Question) (string, error)
