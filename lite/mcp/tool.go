package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Bounds of what a call hands on.
const (
	maxArgs    = 1 << 20   // bytes of a call's arguments
	maxContent = 1 << 20   // bytes of text kept of a result (the runtime cuts further)
	maxDetails = 256 << 10 // bytes of Details
	maxNameLen = 64        // a tool name, as model APIs allow
	maxListed  = 500       // resources a list shows
)

// tool is one of a server's tools, as the model sees it.
type tool struct {
	s    *server
	name string
	def  toolDef
}

// resourcesTool reads a server's resources.
type resourcesTool struct {
	s    *server
	name string
}

// runtimeTools builds the tools of a list, named <server>__<tool> (names
// made unique by the caller's namer).
func (s *server) runtimeTools(l *toolList, _ []string) []runtime.Tool {
	out := make([]runtime.Tool, 0, len(l.Tools)+1)
	for _, d := range l.Tools {
		out = append(out, &tool{s: s, name: s.cfg.Name + "__" + d.Name, def: d})
	}
	if l.Resources {
		out = append(out, &resourcesTool{s: s, name: s.cfg.Name + "__resources"})
	}
	return out
}

// Spec is the tool as the model sees it.
func (t *tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: t.name, Description: t.def.Description, Schema: t.def.Schema}
}

// Kind is "mcp", for metrics.
func (t *tool) Kind() string { return "mcp" }

// Invocation is what policies match: <server>:<tool>.
func (t *tool) Invocation() string { return t.s.cfg.Name + ":" + t.def.Name }

// Deadline leaves the call its own timeout, and a start before it.
func (t *tool) Deadline([]byte) time.Duration { return 2*t.s.callTimeout() + 5*time.Second }

// Run calls the tool on its server.
func (t *tool) Run(ctx context.Context, args []byte) (runtime.Result, error) {
	raw, err := objectArgs(args)
	if err != nil {
		return runtime.ErrorResult("error: " + err.Error()), nil
	}
	var res *sdk.CallToolResult
	err = t.s.call(ctx, "tools/call "+t.def.Name, func(ctx context.Context, c *conn) error {
		var err error
		res, err = c.cs.CallTool(ctx, &sdk.CallToolParams{Name: t.def.Name, Arguments: raw})
		return err
	})
	if err != nil {
		return runtime.Result{}, err
	}
	return toResult(res), nil
}

// objectArgs checks a call's arguments: a JSON object, bounded.
func objectArgs(args []byte) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if len(args) > maxArgs {
		return nil, fmt.Errorf("the arguments are %d bytes, over the %d KiB limit", len(args), maxArgs>>10)
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, fmt.Errorf("the arguments must be a JSON object")
	}
	return json.RawMessage(args), nil
}

// toResult turns a call's result into the model's text and the client's
// details: text content joined, other content summarised a line each,
// structured content and the raw content in Details.
func toResult(res *sdk.CallToolResult) runtime.Result {
	if res == nil {
		return runtime.ErrorResult("error: the MCP server returned no result")
	}
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(describe(c))
		if b.Len() > maxContent {
			break
		}
	}
	text := clip(b.String(), maxContent)
	if text == "" && res.StructuredContent != nil {
		if sc, err := json.Marshal(res.StructuredContent); err == nil {
			text = clip(string(sc), maxContent)
		}
	}
	out := runtime.Result{Content: text, IsError: res.IsError, Details: details(res)}
	if out.Content == "" && out.IsError {
		out.Content = "error: the MCP tool failed without saying why"
	}
	return out
}

// describe is one content item as text: the text itself, a line for the
// rest.
func describe(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *sdk.ResourceLink:
		return fmt.Sprintf("[resource link %s %s]", c.URI, c.Name)
	case *sdk.EmbeddedResource:
		if r := c.Resource; r != nil {
			if r.Text != "" {
				return r.Text
			}
			return fmt.Sprintf("[resource %s %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob))
		}
	}
	return fmt.Sprintf("[%T content]", c)
}

// details is the result's structured content and raw content as JSON,
// the raw content left out when it is too big, nil when there is
// neither.
func details(res *sdk.CallToolResult) []byte {
	type det struct {
		Structured any           `json:"structuredContent,omitempty"`
		Content    []sdk.Content `json:"content,omitempty"`
		Cut        bool          `json:"cut,omitempty"`
	}
	d := det{Structured: res.StructuredContent, Content: res.Content}
	if d.Structured == nil && !hasNonText(res.Content) {
		return nil // the text says it all
	}
	b, err := json.Marshal(d)
	if err == nil && len(b) <= maxDetails {
		return b
	}
	d.Content, d.Cut = nil, true
	if b, err = json.Marshal(d); err == nil && len(b) <= maxDetails {
		return b
	}
	return []byte(`{"cut":true}`)
}

func hasNonText(cs []sdk.Content) bool {
	for _, c := range cs {
		if _, ok := c.(*sdk.TextContent); !ok {
			return true
		}
	}
	return false
}

// Spec is the resources tool as the model sees it.
func (t *resourcesTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: t.name,
		Description: "List or read the resources of MCP server " + quote(t.s.cfg.Name) +
			": action list shows their URIs, action read returns one resource's contents.",
		Schema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["list","read"]},` +
			`"uri":{"type":"string","description":"the resource to read (action read)"}},"required":["action"]}`)}
}

// Kind is "mcp", for metrics.
func (t *resourcesTool) Kind() string { return "mcp" }

// Invocation is what policies match: <server>:resources.
func (t *resourcesTool) Invocation() string { return t.s.cfg.Name + ":resources" }

// Deadline leaves the call its own timeout, and a start before it.
func (t *resourcesTool) Deadline([]byte) time.Duration { return 2*t.s.callTimeout() + 5*time.Second }

// Run lists or reads resources.
func (t *resourcesTool) Run(ctx context.Context, args []byte) (runtime.Result, error) {
	var a struct {
		Action string `json:"action"`
		URI    string `json:"uri"`
	}
	if len(args) > maxArgs || json.Unmarshal(args, &a) != nil {
		return runtime.ErrorResult(`error: the arguments must be {"action": "list"} or {"action": "read", "uri": "..."}`), nil
	}
	var out string
	var err error
	switch a.Action {
	case "list":
		err = t.s.call(ctx, "resources/list", func(ctx context.Context, c *conn) error {
			out, err = listResources(ctx, c)
			return err
		})
	case "read":
		if a.URI == "" || len(a.URI) > 4096 {
			return runtime.ErrorResult("error: read needs the uri of a resource (see action list)"), nil
		}
		err = t.s.call(ctx, "resources/read", func(ctx context.Context, c *conn) error {
			res, err := c.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: a.URI})
			if err == nil {
				out = readText(res)
			}
			return err
		})
	default:
		return runtime.ErrorResult(`error: action must be "list" or "read"`), nil
	}
	if err != nil {
		return runtime.Result{}, err
	}
	return runtime.Result{Content: out}, nil
}

func listResources(ctx context.Context, c *conn) (string, error) {
	var b strings.Builder
	n := 0
	for r, err := range c.cs.Resources(ctx, nil) {
		if err != nil {
			return "", err
		}
		if n++; n > maxListed {
			b.WriteString("[more resources left out]\n")
			break
		}
		b.WriteString(clip(r.URI, 1024))
		if r.Name != "" {
			b.WriteString(" — " + clip(r.Name, 256))
		}
		if r.MIMEType != "" {
			b.WriteString(" (" + clip(r.MIMEType, 128) + ")")
		}
		if r.Description != "" {
			b.WriteString(": " + clip(r.Description, 512))
		}
		b.WriteByte('\n')
	}
	if n == 0 {
		return "(no resources)", nil
	}
	return b.String(), nil
}

func readText(res *sdk.ReadResourceResult) string {
	var b strings.Builder
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if c.Text != "" || len(c.Blob) == 0 {
			b.WriteString(c.Text)
		} else {
			b.WriteString("[" + c.URI + " " + c.MIMEType + ", " + strconv.Itoa(len(c.Blob)) + " bytes of binary content]")
		}
		if b.Len() > maxContent {
			break
		}
	}
	return clip(b.String(), maxContent)
}

// namer makes an agent's MCP tool names valid and unique: characters
// outside [A-Za-z0-9_-] become _, at most 64 characters.
type namer struct{ used map[string]bool }

func newNamer() *namer { return &namer{used: map[string]bool{}} }

func (n *namer) assign(tools []runtime.Tool) []runtime.Tool {
	for _, t := range tools {
		switch t := t.(type) {
		case *tool:
			t.name = n.unique(t.name)
		case *resourcesTool:
			t.name = n.unique(t.name)
		}
	}
	return tools
}

func (n *namer) unique(name string) string {
	base := []byte(name)
	for i, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			base[i] = '_'
		}
	}
	name = string(base[:min(len(base), maxNameLen)])
	for i := 2; n.used[name]; i++ {
		suffix := "_" + strconv.Itoa(i)
		name = string(base[:min(len(base), maxNameLen-len(suffix))]) + suffix
	}
	n.used[name] = true
	return name
}
