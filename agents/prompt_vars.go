package agents

import (
	"strings"
	"time"
)

// Expand fills in the placeholders of a prompt file, as Agnx does (spaces
// inside the braces are allowed):
//
//	{{date}}        now in UTC as 2006-01-02
//	{{time}}        now in UTC as 15:04 UTC
//	{{agent.name}}  the agent's name
//	{{agent.home}}  the agent's folder
//
// Any other {{...}}, and a {{ without a closing }}, is left as written.
func (a *Agent) Expand(s string, now time.Time) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	now = now.UTC()
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
			b.WriteString(now.Format("15:04") + " UTC")
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
