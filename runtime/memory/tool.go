package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// ToolName is the memory tool's name, as Agnx's.
const ToolName = "memory"

// Bounds of the tool's arguments.
const (
	DefaultDays    = 3
	maxDays        = 365
	maxQueryBytes  = 1 << 10
	maxRecallLimit = 50
	maxArgsBytes   = 2*MaxContentBytes + 4<<10 // content may be escaped JSON
)

// Tool is Agnx's memory tool: recall, remember, reflect and update_world
// over a Bank, with Agnx's argument schema and result texts. Lite adds a
// query to recall: with a Searcher, recall with a query returns the best
// matching entries, each citing its file and date, instead of the last
// days; without one, it gives the plain recall.
type Tool struct {
	Bank *Bank
	// Search finds entries for recall with a query; nil: none.
	Search Searcher
}

var _ runtime.Tool = (*Tool)(nil)

// Args are the tool's arguments: Agnx's action, days, content and topic,
// and lite's query and limit.
type Args struct {
	Action  string  `json:"action"`
	Days    *int    `json:"days"`
	Content *string `json:"content"`
	Topic   *string `json:"topic"`
	Query   string  `json:"query"`
	Limit   *int    `json:"limit"`
}

const toolSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["recall","remember","reflect","update_world"],"description":"Action to perform"},` +
	`"days":{"type":"integer","description":"(recall) How many days of daily logs to load (default: 3, at most 365)"},` +
	`"content":{"type":"string","description":"(remember) What to record. (reflect) New content for MEMORY.md — omit to read current memory first. (update_world) The topic's whole new content; empty removes the topic. At most 64 KiB; world memory is capped smaller, so keep topics short."},` +
	`"topic":{"type":"string","description":"(update_world) Topic file to update (e.g., 'people', 'systems', 'preferences')"},` +
	`"query":{"type":"string","description":"(recall) Search your memory and past conversations for this instead of loading the last days; results cite their file and date"},` +
	`"limit":{"type":"integer","description":"(recall with query) How many results (default 8, at most 50)"}},` +
	`"required":["action"]}`

// Spec describes the tool to the model.
func (t *Tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: ToolName,
		Description: "Manage your persistent memory. Actions: 'recall' (load world knowledge, long-term memory, recent experiences; " +
			"with 'query', search memory and past conversations instead), 'remember' (record to daily log), 'reflect' (read/update MEMORY.md), " +
			"'update_world' (write shared world knowledge). Call 'recall' when starting a new session or when you need context about " +
			"the user, their projects, or prior conversations. Do not call it on every message.",
		Schema: []byte(toolSchema)}
}

// Details is the structured result clients get (never the model).
type Details struct {
	Action string `json:"action"`
	// Paths are the files read (recall, reflect) or written.
	Paths []string `json:"paths,omitempty"`
	// Query, Mode and Hits are set by recall with a query.
	Query string    `json:"query,omitempty"`
	Mode  string    `json:"mode,omitempty"`
	Hits  []HitJSON `json:"hits,omitempty"`
}

// HitJSON is a Hit in Details.
type HitJSON struct {
	Source  string  `json:"source"`
	Heading string  `json:"heading,omitempty"`
	Date    string  `json:"date,omitempty"` // RFC 3339
	Score   float64 `json:"score"`
}

// Run does the action.
func (t *Tool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	a, err := DecodeArgs(raw)
	if err != nil {
		return failed("failed to parse tool arguments: " + err.Error()), nil
	}
	switch a.Action {
	case "recall":
		return t.recall(ctx, a), nil
	case "remember":
		switch {
		case a.Content == nil:
			return failed("failed to parse tool arguments: 'content' is required for remember action"), nil
		case *a.Content == "":
			return failed("failed to parse tool arguments: content is required"), nil
		}
		p, err := t.Bank.Remember(*a.Content)
		if err != nil {
			return failed(err.Error()), nil
		}
		return done("Remembered. Written to "+p, Details{Action: a.Action, Paths: []string{p}}), nil
	case "reflect":
		return t.reflect(a), nil
	case "update_world":
		switch {
		case a.Topic == nil:
			return failed("failed to parse tool arguments: 'topic' is required for update_world action"), nil
		case a.Content == nil:
			return failed("failed to parse tool arguments: 'content' is required for update_world action"), nil
		}
		p, err := t.Bank.WriteWorld(*a.Topic, *a.Content)
		if err != nil {
			return failed(err.Error()), nil
		}
		if *a.Content == "" {
			return done("Removed the world topic at "+p, Details{Action: a.Action, Paths: []string{p}}), nil
		}
		return done("Updated world knowledge at "+p, Details{Action: a.Action, Paths: []string{p}}), nil
	}
	return runtime.ErrorResult(fmt.Sprintf("Unknown action: '%s'. Use: recall, remember, reflect, update_world", a.Action)), nil
}

// DecodeArgs decodes and checks the tool's arguments. Unknown keys are
// ignored, as Agnx does; a value of the wrong type or out of bounds is an
// error of one sentence.
func DecodeArgs(raw []byte) (Args, error) {
	var a Args
	if len(raw) > maxArgsBytes {
		return a, fmt.Errorf("the arguments are larger than %d KiB", maxArgsBytes>>10)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return a, fmt.Errorf("'%s' must be %s", te.Field, kindOf(te.Field))
		}
		return a, errors.New("the arguments are not a JSON object")
	}
	switch {
	case a.Action == "":
		return a, errors.New("missing field `action` (recall, remember, reflect or update_world)")
	case a.Days != nil && (*a.Days < 1 || *a.Days > maxDays):
		return a, fmt.Errorf("'days' must be between 1 and %d", maxDays)
	case a.Limit != nil && (*a.Limit < 1 || *a.Limit > maxRecallLimit):
		return a, fmt.Errorf("'limit' must be between 1 and %d", maxRecallLimit)
	case len(a.Query) > maxQueryBytes:
		return a, fmt.Errorf("'query' is longer than %d bytes: use a few keywords", maxQueryBytes)
	case a.Content != nil && len(*a.Content) > MaxContentBytes:
		return a, errContentSize
	case a.Topic != nil && len(*a.Topic) > maxTopic:
		return a, fmt.Errorf("'topic' is longer than %d characters: use a short name such as people or systems", maxTopic)
	}
	return a, nil
}

func kindOf(field string) string {
	switch field {
	case "days", "limit":
		return "an integer"
	}
	return "a string"
}

// failed is Agnx's wording of a failed call.
func failed(msg string) runtime.Result {
	return runtime.ErrorResult("Tool execution failed: " + msg)
}

func done(content string, d Details) runtime.Result {
	data, _ := json.Marshal(d)
	return runtime.Result{Content: content, Details: data}
}

func (t *Tool) reflect(a Args) runtime.Result {
	if a.Content != nil {
		p, err := t.Bank.WriteMemory(*a.Content)
		if err != nil {
			return failed(err.Error())
		}
		return done("Reflected. Updated "+p, Details{Action: a.Action, Paths: []string{p}})
	}
	cur, err := t.Bank.ReadMemory()
	if err != nil {
		return failed(err.Error())
	}
	d := Details{Action: a.Action, Paths: []string{t.Bank.MemoryPath()}}
	if cur == "" {
		return done("MEMORY.md is empty. Call reflect with content to create it.", d)
	}
	if len(cur) > MaxRecallBytes {
		cur = cutUTF8(cur, MaxRecallBytes) + fmt.Sprintf("\n\n[MEMORY.md cut at %d KiB. Writing it with reflect replaces the whole file: keep it shorter.]", MaxRecallBytes>>10)
	}
	return done("Current MEMORY.md:\n\n"+cur, d)
}

func (t *Tool) recall(ctx context.Context, a Args) runtime.Result {
	days := DefaultDays
	if a.Days != nil {
		days = *a.Days
	}
	q := strings.TrimSpace(a.Query)
	prefix := ""
	if q != "" {
		if t.Search != nil {
			return t.search(ctx, q, a.Limit)
		}
		prefix = "Search is not set up for this agent, so here is the plain recall instead.\n\n"
	}
	r, err := t.Bank.Recall(days)
	if err != nil {
		return failed(err.Error())
	}
	text := r.Text
	if text == "" {
		text = "No memories found"
	}
	return done(prefix+text, Details{Action: a.Action, Paths: r.Paths})
}
