package workers

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// question is what the supervising agent's policy is asked about an ACP
// tool call: the tool of ours that would do the same (bash for execute,
// write_file for edit/delete/move, read_file for read/search, web for
// fetch) acting on its subject; anything else is asked as the worker's
// own name with the call's title, which a policy rarely names, so a
// person decides.
func question(worker, inside string, tc acp.ToolCallUpdate) runtime.Question {
	title := ""
	if tc.Title != nil {
		title = *tc.Title
	}
	kind := acp.ToolKindOther
	if tc.Kind != nil {
		kind = *tc.Kind
	}
	in, _ := tc.RawInput.(map[string]any)
	switch kind {
	case acp.ToolKindExecute:
		return runtime.Question{Tool: "bash", Subject: first(command(in), title)}
	case acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
		return runtime.Question{Tool: "write_file", Subject: first(location(tc, in, inside), title)}
	case acp.ToolKindRead, acp.ToolKindSearch:
		return runtime.Question{Tool: "read_file", Subject: first(location(tc, in, inside), str(in, "pattern"), title)}
	case acp.ToolKindFetch:
		return runtime.Question{Tool: "web", Subject: first(str(in, "url"), str(in, "query"), title)}
	}
	return runtime.Question{Tool: worker, Subject: title}
}

// command is the shell command of an execute call's raw input, which
// agents give as a string or an argv.
func command(in map[string]any) string {
	switch c := in["command"].(type) {
	case string:
		return c
	case []any:
		parts := make([]string, 0, len(c))
		for _, p := range c {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return str(in, "cmd")
}

// location is the first path the call names, relative to the folder
// when under it (as our own tools' subjects are).
func location(tc acp.ToolCallUpdate, in map[string]any, inside string) string {
	p := ""
	if len(tc.Locations) > 0 {
		p = tc.Locations[0].Path
	}
	p = first(p, str(in, "file_path"), str(in, "path"), str(in, "abs_path"))
	if r, err := filepath.Rel(inside, p); err == nil && filepath.IsAbs(p) && r != ".." && !strings.HasPrefix(r, "../") {
		return r
	}
	return p
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

// permit asks through ask (runtime.Ask) and answers the agent; a failed
// ask (the call ended, no loop to ask) rejects.
func permit(ctx context.Context, ask askFunc, q runtime.Question, opts []acp.PermissionOption) acp.RequestPermissionOutcome {
	d, err := ask(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return acp.NewRequestPermissionOutcomeCancelled()
		}
		d = runtime.DenyCall
	}
	return answer(d, opts)
}

type askFunc func(context.Context, runtime.Question) (string, error)
