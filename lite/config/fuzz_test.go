package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnx-lite/agnx-lite/agents"
)

// FuzzConfig checks that no agnx.yaml panics the loader and that every
// rejection is one line of the form file:line: msg.
func FuzzConfig(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(DefaultYAML())
	f.Add([]byte("mcp:\n  read_only: [/opt]\n  servers:\n    - {name: a, command: npx, env: {K: '${env:K}'}, read_only: [/opt/x]}\n" +
		"    - {name: b, url: 'https://h/', headers: {A: '${env:A} $B'}, transport: sse, allow_private: true}\n"))
	const file = "etc/agnx.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(file, data)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("accepted config fails Validate: %v", verr)
			}
			return
		}
		var e *agents.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T is not *agents.Error: %v", err, err)
		}
		if e.File != file || e.Line < 1 || e.Msg == "" || strings.Contains(e.Msg, "\n") {
			t.Fatalf("malformed error %q (line %d)", err.Error(), e.Line)
		}
	})
}
