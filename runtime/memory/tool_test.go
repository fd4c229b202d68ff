package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func newTool(t *testing.T) (*Tool, string, string) {
	t.Helper()
	b, agent, world := newBank(t)
	return &Tool{Bank: b}, agent, world
}

func run(t *testing.T, tool *Tool, args string) runtime.Result {
	t.Helper()
	res, err := tool.Run(context.Background(), []byte(args))
	require.NoError(t, err)
	return res
}

func TestTool_Spec(t *testing.T) {
	tool, _, _ := newTool(t)
	spec := tool.Spec()
	assert.Equal(t, "memory", spec.Name)
	var schema struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(spec.Schema, &schema))
	assert.Equal(t, []string{"action"}, schema.Required)
	assert.Equal(t, []string{"recall", "remember", "reflect", "update_world"}, schema.Properties["action"].Enum)
	for k, typ := range map[string]string{"days": "integer", "content": "string", "topic": "string", "query": "string", "limit": "integer"} {
		assert.Equal(t, typ, schema.Properties[k].Type, k)
	}
}

// The Agnx texts, action by action.
func TestTool_Actions(t *testing.T) {
	tool, agent, world := newTool(t)
	assert.Equal(t, runtime.Result{Content: "No memories found", Details: []byte(`{"action":"recall"}`)}, run(t, tool, `{"action":"recall"}`))

	res := run(t, tool, `{"action":"remember","content":"Learned something"}`)
	daily := filepath.Join(agent, "memory", "daily", "2026-11-20.md")
	assert.Equal(t, "Remembered. Written to "+daily, res.Content)
	assert.JSONEq(t, `{"action":"remember","paths":["`+daily+`"]}`, string(res.Details))

	res = run(t, tool, `{"action":"reflect"}`)
	assert.Equal(t, "MEMORY.md is empty. Call reflect with content to create it.", res.Content)
	res = run(t, tool, `{"action":"reflect","content":"My notes"}`)
	assert.Equal(t, "Reflected. Updated "+filepath.Join(agent, "memory", "MEMORY.md"), res.Content)
	res = run(t, tool, `{"action":"reflect"}`)
	assert.Equal(t, "Current MEMORY.md:\n\nMy notes", res.Content)

	res = run(t, tool, `{"action":"update_world","topic":"People","content":"Alice - Role: Engineer"}`)
	assert.Equal(t, "Updated world knowledge at "+filepath.Join(world, "people.md"), res.Content)
	data, err := os.ReadFile(filepath.Join(world, "people.md"))
	require.NoError(t, err)
	assert.Equal(t, "Alice - Role: Engineer", string(data))

	res = run(t, tool, `{"action":"recall","days":1}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "# World Knowledge\n\n## people\n\nAlice - Role: Engineer\n\n---\n\n# Your Memory\n\nMy notes"+
		"\n\n---\n\n# Recent Experiences\n\n# 2026-11-20\n\n## 14:05\n\nLearned something\n", res.Content)
	var d Details
	require.NoError(t, json.Unmarshal(res.Details, &d))
	assert.Len(t, d.Paths, 3)
}

func TestTool_ArgumentErrors(t *testing.T) {
	tool, _, _ := newTool(t)
	for args, want := range map[string]string{
		`{"action":"remember"}`:                              "Tool execution failed: failed to parse tool arguments: 'content' is required for remember action",
		`{"action":"remember","content":""}`:                 "Tool execution failed: failed to parse tool arguments: content is required",
		`{"action":"update_world"}`:                          "Tool execution failed: failed to parse tool arguments: 'topic' is required for update_world action",
		`{"action":"update_world","topic":"t"}`:              "Tool execution failed: failed to parse tool arguments: 'content' is required for update_world action",
		`{"action":"update_world","topic":"","content":"c"}`: "Tool execution failed: topic is empty: name it with letters, digits, - and _ (e.g. people)",
		`{"action":"forget"}`:                                "Unknown action: 'forget'. Use: recall, remember, reflect, update_world",
		`{}`:                                                 "Tool execution failed: failed to parse tool arguments: missing field `action` (recall, remember, reflect or update_world)",
		``:                                                   "Tool execution failed: failed to parse tool arguments: missing field `action` (recall, remember, reflect or update_world)",
		`[1]`:                                                "Tool execution failed: failed to parse tool arguments: the arguments are not a JSON object",
		`{"action":"recall","days":"3"}`:                     "Tool execution failed: failed to parse tool arguments: 'days' must be an integer",
		`{"action":"recall","days":0}`:                       "Tool execution failed: failed to parse tool arguments: 'days' must be between 1 and 365",
		`{"action":"recall","days":366}`:                     "Tool execution failed: failed to parse tool arguments: 'days' must be between 1 and 365",
		`{"action":"recall","days":1.5}`:                     "Tool execution failed: failed to parse tool arguments: 'days' must be an integer",
		`{"action":"recall","query":"x","limit":0}`:          "Tool execution failed: failed to parse tool arguments: 'limit' must be between 1 and 50",
		`{"action":"recall","query":7}`:                      "Tool execution failed: failed to parse tool arguments: 'query' must be a string",
		`{"action":5}`:                                       "Tool execution failed: failed to parse tool arguments: 'action' must be a string",
	} {
		res := run(t, tool, args)
		assert.True(t, res.IsError, args)
		assert.Equal(t, want, res.Content, args)
	}
	res := run(t, tool, `{"action":"recall","query":"`+strings.Repeat("q", 1025)+`"}`)
	assert.Contains(t, res.Content, "'query' is longer than 1024 bytes")
	res = run(t, tool, `{"action":"remember","content":"`+strings.Repeat("c", MaxContentBytes+1)+`"}`)
	assert.Contains(t, res.Content, "content is larger than 64 KiB")
	res = run(t, tool, `{"action":"update_world","topic":"`+strings.Repeat("t", 65)+`","content":"c"}`)
	assert.Contains(t, res.Content, "'topic' is longer than 64 characters")
	res = run(t, tool, `{"action":"remember","content":"`+strings.Repeat("c", maxArgsBytes)+`"}`)
	assert.Contains(t, res.Content, "the arguments are larger than")
	// Unknown keys are ignored, as Agnx does.
	assert.False(t, run(t, tool, `{"action":"recall","mood":"happy"}`).IsError)
}

// fakeSearch is a Searcher that answers from a list.
type fakeSearch struct {
	got Query
	res Results
	err error
}

func (f *fakeSearch) Search(_ context.Context, q Query) (Results, error) {
	f.got = q
	return f.res, f.err
}

func TestTool_RecallWithQuery(t *testing.T) {
	tool, _, _ := newTool(t)
	day := time.Date(2026, 11, 18, 9, 30, 0, 0, time.Local)
	fs := &fakeSearch{res: Results{Mode: "hybrid", Hits: []Hit{
		{Source: "memory/daily/2026-11-18.md", Heading: "## 09:30", Date: day, Text: "Bought oat milk.\n", Score: 2},
		{Source: "session 01JABC", Date: day.Add(time.Hour), Text: "user: do we have oat milk?", Score: 1},
		{Source: "memory/MEMORY.md", Text: "Likes oat milk."},
	}}}
	tool.Search = fs
	res := run(t, tool, `{"action":"recall","query":" oat milk ","limit":3}`)
	assert.False(t, res.IsError)
	require.NotNil(t, fs.got.Viewer, "the tool searches as the calling session; outside one, as none (it sees no session)")
	assert.Equal(t, runtime.Viewer{}, *fs.got.Viewer)
	fs.got.Viewer = nil
	assert.Equal(t, Query{Text: "oat milk", Limit: 3}, fs.got)
	assert.Equal(t, "Memories matching \"oat milk\" (hybrid search, best first):\n\n"+
		"[memory/daily/2026-11-18.md 09:30] Bought oat milk.\n\n"+
		"[session 01JABC 2026-11-18 10:30] user: do we have oat milk?\n\n"+
		"[memory/MEMORY.md] Likes oat milk.", res.Content)
	var d Details
	require.NoError(t, json.Unmarshal(res.Details, &d))
	assert.Equal(t, "oat milk", d.Query)
	assert.Equal(t, "hybrid", d.Mode)
	require.Len(t, d.Hits, 3)
	assert.Equal(t, day.Format(time.RFC3339), d.Hits[0].Date)
	assert.Empty(t, d.Hits[2].Date)

	run(t, tool, `{"action":"recall","query":"x"}`)
	assert.Equal(t, DefaultLimit, fs.got.Limit)

	fs.res = Results{Mode: "keyword", Note: "The embeddings endpoint did not answer, so this is keyword search only."}
	res = run(t, tool, `{"action":"recall","query":"nothing"}`)
	assert.Equal(t, "No memories match \"nothing\".\nThe embeddings endpoint did not answer, so this is keyword search only.", res.Content)

	fs.err = errors.New("index is damaged")
	res = run(t, tool, `{"action":"recall","query":"x"}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "Tool execution failed: the memory search failed (index is damaged); recall without a query still works", res.Content)
}

// Without a Searcher, recall with a query is the plain recall.
func TestTool_RecallQueryFallsBack(t *testing.T) {
	tool, _, _ := newTool(t)
	run(t, tool, `{"action":"remember","content":"fact"}`)
	res := run(t, tool, `{"action":"recall","query":"fact"}`)
	assert.False(t, res.IsError)
	assert.True(t, strings.HasPrefix(res.Content, "Search is not set up for this agent, so here is the plain recall instead.\n\n# Recent Experiences"), res.Content)
}

func TestFormatHits_Capped(t *testing.T) {
	var hits []Hit
	for range 100 {
		hits = append(hits, Hit{Source: "memory/MEMORY.md", Text: strings.Repeat("z", 1000)})
	}
	out := FormatHits("z", Results{Hits: hits})
	assert.LessOrEqual(t, len(out), MaxRecallBytes+200)
	assert.Contains(t, out, "more results left out")
}

func TestTool_FailuresAreResults(t *testing.T) {
	tool, agent, _ := newTool(t)
	require.NoError(t, os.MkdirAll(filepath.Join(agent, "memory", "MEMORY.md"), 0o755))
	res := run(t, tool, `{"action":"reflect","content":"x"}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Tool execution failed: ")
	assert.Contains(t, res.Content, "MEMORY.md is not a regular file")
}
