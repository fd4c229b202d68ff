package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of what a server's tool list may cost: tools past them are
// dropped with a warning, not the server.
const (
	maxTools       = 128      // tools per server
	maxSchema      = 64 << 10 // bytes of one tool's input schema
	maxList        = 1 << 20  // bytes of a server's whole list
	maxDescription = 1 << 10  // a description is cut there
	maxPages       = 32       // tools/list pages read
	maxWarnings    = 8        // sentences kept about dropped tools
)

// toolList is what the manager keeps of a server's tools, and caches.
type toolList struct {
	Tools     []toolDef `json:"tools"`
	Resources bool      `json:"resources,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
}

type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

// listSink collects one listing's tools within the limits. The SDK
// decodes a whole tools/list page; trimTools hands it here before the
// SDK keeps it (a session of the newest protocol caches list results),
// so that neither keeps more than the limits allow.
type listSink struct {
	server  string
	tools   []toolDef
	size    int
	over    int // tools past maxTools
	warns   []string
	dropped int // warnings not kept
	saw     bool
}

type sinkKey struct{}

// trimTools is the client's sending middleware: it bounds the tools of
// each tools/list answer, as the listing in the context allows.
func trimTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		sink, _ := ctx.Value(sinkKey{}).(*listSink)
		if r, ok := res.(*sdk.ListToolsResult); ok && sink != nil {
			sink.saw = true
			r.Tools = sink.take(r.Tools)
		}
		return res, err
	}
}

// take keeps the tools that fit, with their schemas as raw JSON and
// descriptions cut, and returns them; the others are counted or warned
// about.
func (k *listSink) take(tools []*sdk.Tool) []*sdk.Tool {
	kept := tools[:0]
	for _, t := range tools {
		if t == nil || t.Name == "" {
			continue
		}
		if len(k.tools) >= maxTools {
			k.over++
			continue
		}
		if len(t.Name) > 128 {
			k.warn(fmt.Sprintf("a tool named %q has a name longer than 128 bytes: dropped", clip(t.Name, 64)))
			continue
		}
		schema, err := schemaOf(t.InputSchema)
		switch {
		case err != nil:
			k.warn(fmt.Sprintf("tool %q has an input schema that is not a JSON object: dropped", clip(t.Name, 64)))
			continue
		case len(schema) > maxSchema:
			k.warn(fmt.Sprintf("tool %q has an input schema over the %d KiB limit: dropped",
				clip(t.Name, 64), maxSchema>>10))
			continue
		}
		desc := clip(t.Description, maxDescription)
		cost := len(schema) + len(desc) + len(t.Name)
		if k.size+cost > maxList {
			k.warn(fmt.Sprintf("tool %q would take the tool list past %d KiB: dropped", clip(t.Name, 64), maxList>>10))
			continue
		}
		k.size += cost
		k.tools = append(k.tools, toolDef{Name: t.Name, Description: desc, Schema: schema})
		t.InputSchema, t.OutputSchema, t.Description, t.Icons, t.Meta = schema, nil, desc, nil, nil
		kept = append(kept, t)
	}
	clear(tools[len(kept):]) // what was dropped is garbage now
	return kept
}

func (k *listSink) warn(s string) {
	if len(k.warns) < maxWarnings {
		k.warns = append(k.warns, "MCP server "+quote(k.server)+": "+s)
		return
	}
	k.dropped++
}

func (k *listSink) full() bool { return len(k.tools) >= maxTools || k.size >= maxList }

// result is the list, with one sentence for the tools past maxTools and
// for the warnings not kept.
func (k *listSink) result(resources bool) *toolList {
	l := &toolList{Tools: k.tools, Resources: resources, Warnings: k.warns}
	if k.over > 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("MCP server %s offers more than %d tools: %d more were dropped",
			quote(k.server), maxTools, k.over))
	}
	if k.dropped > 0 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("MCP server %s: %d more tools were dropped for their size",
			quote(k.server), k.dropped))
	}
	if l.Tools == nil {
		l.Tools = []toolDef{}
	}
	return l
}

// schemaOf is a tool's input schema as compact JSON; a missing one is an
// object schema with no properties.
func schemaOf(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if n := leastSize(v, maxSchema+1); n > maxSchema {
		// Not marshalled: that would build (and pool) a buffer as big.
		return make(json.RawMessage, n), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("not an object")
	}
	if len(b) > maxSchema {
		return b, nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		b = buf.Bytes()
	}
	return b, nil
}

// leastSize is a lower bound of v's JSON size (v as the SDK decodes
// JSON: maps, slices, strings, numbers, booleans, nil), walking no
// further once it passes budget.
func leastSize(v any, budget int) int {
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case map[string]any:
		n := 2
		for k, e := range v {
			if n += len(k) + 4 + leastSize(e, budget-n); n > budget {
				return n
			}
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			if n += 1 + leastSize(e, budget-n); n > budget {
				return n
			}
		}
		return n
	case json.RawMessage:
		return len(v)
	}
	return 1
}

// clip cuts s at n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "") + "…"
}

// listTools lists the session's tools within the limits.
func listTools(ctx context.Context, c *conn, server string) (*toolList, error) {
	sink := &listSink{server: server}
	ctx = context.WithValue(ctx, sinkKey{}, sink)
	cursor := ""
	for range maxPages {
		sink.saw = false
		res, err := c.cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		if !sink.saw { // served from the SDK's cache, trimmed already
			sink.take(res.Tools)
		}
		if res.NextCursor == "" || res.NextCursor == cursor || sink.full() {
			if res.NextCursor != "" && len(sink.tools) >= maxTools {
				sink.over++ // at least one more
			}
			break
		}
		cursor = res.NextCursor
	}
	return sink.result(c.resources), nil
}

// tools returns the server's list: kept, cached, or listed by starting
// the server.
func (s *server) tools(ctx context.Context) (*toolList, []string) {
	s.mu.Lock()
	l := s.list
	s.mu.Unlock()
	if l != nil {
		return l, l.Warnings
	}
	if c := s.m.o.Cache; c != nil {
		data, err := c.Get(ctx, s.key)
		if err != nil {
			s.m.o.Log.Warn("cannot read a cached MCP tool list", "server", s.cfg.Name, "err", err)
		}
		if data != nil {
			var cached toolList
			if err := json.Unmarshal(data, &cached); err == nil && cached.Tools != nil {
				s.mu.Lock()
				if s.list == nil {
					s.list = &cached
				}
				l = s.list
				s.mu.Unlock()
				return l, l.Warnings
			}
		}
	}
	s.mu.Lock()
	s.listed = true // listed now: the start need not check a cached list
	s.mu.Unlock()
	l, _, err := s.relistNow(ctx)
	if err != nil {
		return nil, []string{err.Error() + " (its tools are left out)"}
	}
	return l, l.Warnings
}

// relistNow lists the server's tools (starting it if needed), keeps and
// caches the list, and says whether it changed.
func (s *server) relistNow(ctx context.Context) (*toolList, bool, error) {
	var l *toolList
	err := s.call(ctx, "tools/list", func(ctx context.Context, c *conn) error {
		var err error
		l, err = listTools(ctx, c, s.cfg.Name)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	data, err := json.Marshal(l)
	if err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	old := s.list
	s.list = l
	s.listed = true
	s.mu.Unlock()
	changed := old != nil && !sameList(old, l)
	if c := s.m.o.Cache; c != nil {
		if err := c.Put(ctx, s.key, data); err != nil {
			s.m.o.Log.Warn("cannot cache an MCP tool list", "server", s.cfg.Name, "err", err)
		}
	}
	return l, changed, nil
}

func sameList(a, b *toolList) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// listChanged relists after the server's tools/list_changed, one relist
// at a time (a notice during one makes it go again), and tells the
// manager's owner when the list differs.
func (s *server) listChanged(c *conn) {
	s.mu.Lock()
	if s.cur != c {
		s.mu.Unlock()
		return
	}
	if s.relist {
		s.again = true
		s.mu.Unlock()
		return
	}
	s.relist = true
	s.mu.Unlock()
	for {
		_, changed, err := s.relistNow(context.Background())
		if err != nil {
			s.m.o.Log.Warn("cannot relist an MCP server's tools after it changed them", "server", s.cfg.Name, "err", err)
		}
		if changed && s.m.o.Changed != nil {
			s.m.o.Changed(s.agent)
		}
		s.mu.Lock()
		if !s.again || err != nil {
			s.relist, s.again = false, false
			s.mu.Unlock()
			return
		}
		s.again = false
		s.mu.Unlock()
	}
}
