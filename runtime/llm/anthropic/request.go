package anthropic

import (
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
)

// cacheControl is the marker of a prompt-cache breakpoint.
const cacheControl = `"cache_control":{"type":"ephemeral"}`

// DefaultMaxTokens returns the max_tokens sent when the agent sets no
// max_output_tokens (the API requires one): 4096 for the Claude 3 models
// that allow no more, 8192 otherwise.
func DefaultMaxTokens(model string) int {
	m := strings.ToLower(model)
	if strings.Contains(m, "claude-3-") && !strings.Contains(m, "claude-3-5") && !strings.Contains(m, "claude-3-7") {
		return 4096
	}
	return 8192
}

// encodeRequest appends the /v1/messages body for req to dst, written by
// hand like the other providers' (hot path, raw schemas). The stable
// prefix, tools then system, ends in a cache breakpoint, and so does the
// conversation's last block.
func encodeRequest(dst []byte, req *runtime.Request) ([]byte, error) {
	w := jsonw.Writer{B: dst}
	w.Object()
	w.Key("model").String(req.Model)
	maxTokens := req.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens(req.Model)
	}
	w.Key("max_tokens").Int(int64(maxTokens))
	w.Key("stream").Bool(true)
	if req.Temperature != nil {
		w.Key("temperature").Float(*req.Temperature)
	}
	if len(req.Tools) > 0 {
		if err := writeTools(&w, req.Tools, req.System == ""); err != nil {
			return nil, err
		}
	}
	if req.System != "" {
		w.Key("system").Array().Object()
		w.Key("type").String("text").Key("text").String(req.System)
		w.B = append(w.B, ',')
		w.B = append(w.B, cacheControl...)
		w.EndObject().EndArray()
	}
	m := messageWriter{w: &w, toolsAsText: len(req.Tools) == 0}
	m.write(req.Messages)
	return w.EndObject().B, nil
}

// writeTools writes {name, description, input_schema} per tool; the last
// one carries the prefix's cache breakpoint when mark is set (no system
// prompt follows it).
func writeTools(w *jsonw.Writer, tools []runtime.ToolSpec, mark bool) error {
	w.Key("tools").Array()
	for i, t := range tools {
		w.Object()
		w.Key("name").String(t.Name)
		if t.Description != "" {
			w.Key("description").String(t.Description)
		}
		switch {
		case len(t.Schema) == 0:
			w.Key("input_schema").RawString(llm.EmptySchema)
		case llm.IsObject(t.Schema):
			w.Key("input_schema").Raw(t.Schema)
		default:
			return fmt.Errorf("tool %q: schema is not a JSON object", t.Name)
		}
		if mark && i == len(tools)-1 {
			w.B = append(w.B, ',')
			w.B = append(w.B, cacheControl...)
		}
		w.EndObject()
	}
	w.EndArray()
	return nil
}
