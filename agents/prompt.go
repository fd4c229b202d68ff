package agents

import (
	"strings"
	"time"
)

// RenderSystem returns the system message, assembled as Agnx does: the
// parts that are not empty, separated by a blank line, in this order:
//
//  1. PrimeDirectives;
//  2. the soul, system prompt and instructions, each with its
//     placeholders filled in (see Expand);
//  3. "## Directives" and one "- " line per directive file:
//     SharedDirectives, then the agent's own Directives, then, for an
//     agent with memory (HasMemory) when neither folder has a memory.md,
//     MemoryDirective;
//  4. the <available_skills> list.
//
// The placeholders are at most minute-precise, so the message is built
// once a minute and the same string returned for every call within it.
// That needs the Agent left alone once loaded, as it is; a copy (a test's
// variant of an agent) renders its own, since the result is kept with the
// address it was made for.
func (a *Agent) RenderSystem(now time.Time) string {
	minute := now.Unix() / 60
	if r, _ := a.system.Load().(*renderedSystem); r != nil && r.agent == a && r.minute == minute {
		return r.text
	}
	text := a.renderSystem(now)
	a.system.Store(&renderedSystem{agent: a, minute: minute, text: text})
	return text
}

type renderedSystem struct {
	agent  *Agent
	minute int64
	text   string
}

func (a *Agent) renderSystem(now time.Time) string {
	var b strings.Builder
	add := func(part string) {
		if part == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(part)
	}
	add(PrimeDirectives)
	for _, part := range [...]string{a.Soul, a.SystemPrompt, a.Instructions} {
		add(a.Expand(strings.TrimSpace(part), now))
	}
	add(a.directivesBlock())
	add(a.skillsBlock())
	return b.String()
}

// directivesBlock is "## Directives" with a "- " line per directive, or ""
// when there are none.
func (a *Agent) directivesBlock() string {
	lists := [...][]Directive{a.SharedDirectives, a.Directives, nil}
	if a.needsMemoryDirective() {
		lists[2] = []Directive{{Name: "memory", Text: MemoryDirective}}
	}
	if len(lists[0])+len(lists[1])+len(lists[2]) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Directives\n")
	for _, list := range lists {
		for _, d := range list {
			b.WriteString("- ")
			b.WriteString(d.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// skillsBlock lists the skills for the model, or "" when there are none:
//
//	<available_skills>
//	  <skill>
//	    <name>task-extraction</name>
//	    <description>...</description>
//	    <location>/abs/path/skills/task-extraction/SKILL.md</location>
//	  </skill>
//	</available_skills>
//
// Values are XML-escaped.
func (a *Agent) skillsBlock() string {
	if len(a.Skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, s := range a.Skills {
		b.WriteString("  <skill>\n    <name>")
		b.WriteString(xmlEscape.Replace(s.Name))
		b.WriteString("</name>\n    <description>")
		b.WriteString(xmlEscape.Replace(s.Description))
		b.WriteString("</description>\n    <location>")
		b.WriteString(xmlEscape.Replace(s.Path))
		b.WriteString("</location>\n  </skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}

var xmlEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")
