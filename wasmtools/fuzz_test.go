package wasmtools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnx-lite/agnx-lite/agents"
)

// FuzzManifest checks that no tool.yaml, however broken, panics the parser,
// that every rejection is one "file:line: msg" line and that everything
// accepted is within bounds.
func FuzzManifest(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	seeds = append(seeds, "examples/calc/tool.yaml", "examples/jsonq/tool.yaml", "examples/wc/tool.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const file = "tools/x/tool.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(file, data)
		if err != nil {
			e, ok := err.(*agents.Error)
			if !ok {
				t.Fatalf("error %T is not *agents.Error: %v", err, err)
			}
			if e.File != file || e.Msg == "" || strings.Contains(e.Msg, "\n") {
				t.Fatalf("malformed error %q", err.Error())
			}
			return
		}
		l := m.Limits
		if !validName(m.Name) || m.Description == "" || len(m.Schema) == 0 ||
			l.MemoryMB < 1 || l.MemoryMB > MaxMemoryMB || l.Timeout <= 0 || l.Timeout > MaxTimeout ||
			l.OutputKB < 1 || l.OutputKB > MaxOutputKB {
			t.Fatalf("accepted an invalid manifest: %+v", m)
		}
	})
}
