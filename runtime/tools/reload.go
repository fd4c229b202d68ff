package tools

import (
	"context"
	"encoding/json"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// DiscoveredTool is a CLI tool found in a tools/<name>/ folder.
type DiscoveredTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ToolScan is what one scan of the tool folders found.
type ToolScan struct {
	Tools []DiscoveredTool `json:"discovered_tools"`
	Count int              `json:"count"`
	Dirs  []string         `json:"directories_scanned"`
}

// ReloadTools is Agnx's reload_tools: it scans the tool folders now and
// reports what it found. The agent picks changed tool folders up by
// itself when its next turn starts (their times are compared, as its
// other files' are), so the tools found are callable from then on.
type ReloadTools struct {
	Scan func() ToolScan
}

var _ runtime.Tool = (*ReloadTools)(nil)

// Spec describes reload_tools to the model.
func (t *ReloadTools) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "reload_tools",
		Description: "Reload tools by scanning the tool folders (tools/<name>/ with an executable run or run.* and " +
			"a README.md). Call this after writing a new tool script to disk; the tools found can be used from " +
			"your next turn. Returns a summary of all discovered tools.",
		Schema: []byte(`{"type":"object","properties":{}}`)}
}

// Run scans and reports, as JSON.
func (t *ReloadTools) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	scan := t.Scan()
	if scan.Tools == nil {
		scan.Tools = []DiscoveredTool{}
	}
	scan.Count = len(scan.Tools)
	out, err := json.MarshalIndent(scan, "", "  ")
	if err != nil {
		return runtime.ErrorResult("error: reload_tools: " + err.Error()), nil
	}
	return runtime.Result{Content: string(out)}, nil
}
