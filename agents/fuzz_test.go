package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzAgentYAML checks that no agent.yaml, however broken, panics the
// loader, and that every rejection is one line of the form file:line: msg.
func FuzzAgentYAML(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(header + "spec:\n  model: {provider: ollama, name: m, temperature: 9}\n"))
	f.Add([]byte(header + "spec:\n  model: {provider: ollama, name: m}\n  heartbeat: {every: 45m, active_hours: \"22:00-06:00\", deliver_to: {gateway: telegram, chat_id: \"1\"}}\n"))
	f.Add([]byte(header + "spec:\n  model: {provider: ollama, name: m}\n  tools:\n    - {type: mcp, name: fs, command: npx, env: {A: '${env:B}'}}\n" +
		"    - {type: mcp, name: gh, url: 'https://h/', headers: {X: y}, transport: sse}\n    - {type: cli, name: c, command: c, env: [A]}\n"))
	f.Add([]byte(header + "spec:\n  model: {provider: ollama, name: m}\n  tools:\n    - {type: mcp, name: x, command: c, env: [[1]]}\n"))
	const file = "agents/x/agent.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		af, _, err := parseAgent(file, data)
		if err == nil {
			if tp := af.Spec.Model.Temperature; (tp != nil && !(*tp >= 0 && *tp <= 2)) || !ValidName(af.Metadata.Name) {
				t.Fatalf("accepted an invalid agent: %+v", af)
			}
			return
		}
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("error %T is not *Error: %v", err, err)
		}
		if e.File != file || e.Line < 1 || e.Msg == "" || strings.Contains(e.Msg, "\n") {
			t.Fatalf("malformed error %q (line %d)", err.Error(), e.Line)
		}
	})
}
