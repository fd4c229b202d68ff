package agents_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

func Example() {
	root, _ := os.MkdirTemp("", "agents")
	defer os.RemoveAll(root)

	dir, err := agents.WriteTemplate(root, "helper")
	if err != nil {
		panic(err)
	}
	entries, _ := agents.List(root) // cheap: names and times only
	fmt.Println(len(entries), entries[0].Name)

	a, err := agents.Load(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Model.Provider, a.Model.Name, *a.Model.Temperature)
	prompt := a.RenderSystem(time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC))
	fmt.Println(len(prompt) > 0)

	// A broken edit is reported as file:line: what is wrong.
	bad := "apiVersion: agnx/v1alpha1\nkind: Agent\nmetadata:\n  name: helper\nspec:\n  model: {provider: ollama}\n"
	_ = os.WriteFile(filepath.Join(dir, agents.FileName), []byte(bad), 0o644)
	_, err = agents.Load(dir)
	rel, _ := filepath.Rel(root, dir)
	fmt.Println(err.Error()[len(root)+1+len(rel)+1:])
	// Output:
	// 1 helper
	// ollama qwen3:1.7b 0.7
	// true
	// agent.yaml:6: spec.model.name is required
}
