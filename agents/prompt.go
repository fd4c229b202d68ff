package agents

import (
	"strings"
	"time"
)

// RenderSystem returns the system prompt: the soul, system prompt and
// instructions that are not empty, separated by a blank line, with these
// placeholders filled in (spaces inside the braces are allowed):
//
//	{{date}}        now as 2006-01-02
//	{{time}}        now as 15:04 MST
//	{{agent.name}}  the agent's name
//	{{agent.home}}  the agent's folder
//
// Any other {{...}} is left as written.
func (a *Agent) RenderSystem(now time.Time) string {
	var b strings.Builder
	for _, part := range [...]string{a.Soul, a.SystemPrompt, a.Instructions} {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(part)
	}
	return a.expand(b.String(), now)
}

func (a *Agent) expand(s string, now time.Time) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		start := strings.Index(s, "{{")
		if start < 0 {
			break
		}
		end := strings.Index(s[start+2:], "}}")
		if end < 0 {
			break
		}
		end += start + 2
		b.WriteString(s[:start])
		switch strings.TrimSpace(s[start+2 : end]) {
		case "date":
			b.WriteString(now.Format("2006-01-02"))
		case "time":
			b.WriteString(now.Format("15:04 MST"))
		case "agent.name":
			b.WriteString(a.Name)
		case "agent.home":
			b.WriteString(a.Dir)
		default:
			b.WriteString(s[start : end+2])
		}
		s = s[end+2:]
	}
	b.WriteString(s)
	return b.String()
}
