package acpserver

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxResult bounds the text of a tool result sent to the client: it is
// shown, not read by the model, which got it whole.
const maxResult = 64 << 10

func startCall(e *runtime.Event) acp.SessionUpdate {
	opts := []acp.ToolCallStartOpt{acp.WithStartKind(toolKind(e.ToolName)), acp.WithStartStatus(acp.ToolCallStatusInProgress)}
	if e.Arguments != "" && fastjson.Validate(e.Arguments) == nil && len(e.Arguments) <= maxResult {
		opts = append(opts, acp.WithStartRawInput(json.RawMessage(e.Arguments)))
	}
	return acp.StartToolCall(acp.ToolCallId(e.CallID), callTitle(e.ToolName, subject(e.Arguments)), opts...)
}

func resultUpdate(e *runtime.Event) acp.SessionUpdate {
	status := acp.ToolCallStatusCompleted
	if !e.Success {
		status = acp.ToolCallStatusFailed
	}
	return acp.UpdateToolCall(acp.ToolCallId(e.CallID), acp.WithUpdateStatus(status),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(cut(e.Content, maxResult)))}))
}

// callTitle is what an editor shows of a call: the tool and what it acts on.
func callTitle(tool, subject string) string {
	subject = strings.Join(strings.Fields(subject), " ")
	if subject == "" {
		return tool
	}
	return tool + " " + cut(subject, 120)
}

// subject is the argument a call acts on (a path, a command), or the
// arguments themselves.
func subject(args string) string {
	v, err := fastjson.Parse(args)
	if err != nil {
		return args
	}
	for _, k := range []string{"command", "path", "file_path", "pattern", "url", "query", "action"} {
		if s := v.GetStringBytes(k); len(s) > 0 {
			return string(s)
		}
	}
	if o, err := v.Object(); err == nil && o.Len() == 0 {
		return ""
	}
	return args
}

// toolKind is the ACP kind of one of agnx-lite's tools, for the icon an
// editor shows.
func toolKind(name string) acp.ToolKind {
	switch name {
	case "read_file", "list_dir", "glob":
		return acp.ToolKindRead
	case "write_file", "edit_file", "apply_patch":
		return acp.ToolKindEdit
	case "grep", "web_search", "memory_search":
		return acp.ToolKindSearch
	case "bash", "background_process":
		return acp.ToolKindExecute
	case "web_fetch":
		return acp.ToolKindFetch
	}
	return acp.ToolKindOther
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
