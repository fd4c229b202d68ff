package agents

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgent_Expand(t *testing.T) {
	now := time.Date(2026, 3, 9, 14, 5, 0, 0, time.FixedZone("CET", 3600))
	a := &Agent{Name: "bob", Dir: "/agents/bob"}
	for in, want := range map[string]string{
		"{{date}} {{time}}":                      "2026-03-09 13:05 UTC",
		"I am {{agent.name}} in {{agent.home}}.": "I am bob in /agents/bob.",
		"{{ date }}|{{  agent.name}}":            "2026-03-09|bob",
		"{{user}} {{ agent.mood }} {{date}}":     "{{user}} {{ agent.mood }} 2026-03-09",
		"{{date}} and {{date":                    "2026-03-09 and {{date",
		"{{{date}}}":                             "{{{date}}}",
		"plain":                                  "plain",
	} {
		assert.Equal(t, want, a.Expand(in, now), in)
	}
}

func TestAgent_RenderSystem(t *testing.T) {
	now := time.Date(2026, 3, 9, 14, 5, 0, 0, time.UTC)
	tests := []struct {
		name string
		a    Agent
		want string
	}{
		{"nothing but the prime directives", Agent{}, ""},
		{"parts in order, empty ones skipped", Agent{Soul: "Soul.\n", SystemPrompt: "  \n", Instructions: "Instr. {{date}}"},
			"Soul.\n\nInstr. 2026-03-09"},
		{"directives: shared, then the agent's", Agent{Instructions: "I.",
			SharedDirectives: []Directive{{Name: "a", Text: "Shared one."}},
			Directives:       []Directive{{Name: "b", Text: "Mine\nover two lines."}}},
			"I.\n\n## Directives\n- Shared one.\n- Mine\nover two lines.\n"},
		{"skills, escaped", Agent{Skills: []Skill{
			{Name: "task-extraction", Description: "Find <tasks> & \"todos\"", Path: "/a/skills/task-extraction/SKILL.md"},
			{Name: "b", Description: "B", Path: "/a/skills/b/SKILL.md"}}},
			"<available_skills>\n  <skill>\n    <name>task-extraction</name>\n" +
				"    <description>Find &lt;tasks&gt; &amp; &quot;todos&quot;</description>\n" +
				"    <location>/a/skills/task-extraction/SKILL.md</location>\n  </skill>\n" +
				"  <skill>\n    <name>b</name>\n    <description>B</description>\n" +
				"    <location>/a/skills/b/SKILL.md</location>\n  </skill>\n</available_skills>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.RenderSystem(now)
			rest, ok := strings.CutPrefix(got, PrimeDirectives)
			assert.True(t, ok, "the prime directives come first")
			if tt.want == "" {
				assert.Empty(t, rest)
				return
			}
			assert.Equal(t, "\n\n"+tt.want, rest)
		})
	}
}

func TestAgent_RenderSystemOncePerMinute(t *testing.T) {
	a := &Agent{Name: "bob", Instructions: "{{agent.name}} at {{time}}"}
	at := func(hms string) time.Time {
		v, err := time.Parse(time.DateTime, "2026-03-09 "+hms)
		require.NoError(t, err)
		return v
	}
	first := a.RenderSystem(at("14:05:10"))
	assert.True(t, strings.HasSuffix(first, "bob at 14:05 UTC"))
	assert.Zero(t, testing.AllocsPerRun(10, func() { a.RenderSystem(at("14:05:59")) }), "the same minute builds nothing")
	assert.Equal(t, unsafe.StringData(first), unsafe.StringData(a.RenderSystem(at("14:05:59"))))
	assert.True(t, strings.HasSuffix(a.RenderSystem(at("14:06:00")), "bob at 14:06 UTC"), "a new minute renders again")

	variant := *a // a copy keeps the original's result but renders its own
	variant.Name = "eve"
	assert.True(t, strings.HasSuffix(variant.RenderSystem(at("14:06:00")), "eve at 14:06 UTC"))
	assert.True(t, strings.HasSuffix(a.RenderSystem(at("14:06:00")), "bob at 14:06 UTC"))
}

func BenchmarkAgent_RenderSystem(b *testing.B) {
	a := &Agent{Name: "bob", Dir: "/a/bob", Soul: "You are kind.", Instructions: "Today is {{date}}. You are {{agent.name}}."}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		a.RenderSystem(now)
	}
}
