package agents

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAgent_RenderSystem(t *testing.T) {
	now := time.Date(2026, 3, 9, 14, 5, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name                       string
		soul, system, instructions string
		want                       string
	}{
		{"all parts", "Soul.\n", "\nSystem.", "Instr.", "Soul.\n\nSystem.\n\nInstr."},
		{"empty parts skipped", "  \n", "", "Only.", "Only."},
		{"nothing", "", "", "", ""},
		{"placeholders", "{{date}} {{time}}", "", "I am {{agent.name}} in {{agent.home}}.",
			"2026-03-09 14:05 CET\n\nI am bob in /agents/bob."},
		{"spaces in braces", "{{ date }}|{{  agent.name}}", "", "", "2026-03-09|bob"},
		{"unknown left alone", "{{user}} {{ agent.mood }} {{date}}", "", "", "{{user}} {{ agent.mood }} 2026-03-09"},
		{"unclosed", "{{date}} and {{date", "", "", "2026-03-09 and {{date"},
		{"braces inside", "{{{date}}}", "", "", "{{{date}}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Agent{Name: "bob", Dir: "/agents/bob", Soul: tt.soul, SystemPrompt: tt.system, Instructions: tt.instructions}
			assert.Equal(t, tt.want, a.RenderSystem(now))
		})
	}
}

func BenchmarkAgent_RenderSystem(b *testing.B) {
	a := &Agent{Name: "bob", Dir: "/a/bob", Soul: "You are kind.", Instructions: "Today is {{date}}. You are {{agent.name}}."}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		a.RenderSystem(now)
	}
}
