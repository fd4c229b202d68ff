package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// The compaction and usage workload: every compactEvery-th agent keeps
// only compactBudget tokens of history, so its sessions outgrow it within
// a few turns and the model is asked for summaries; every model call goes
// into the usage ledger, read back at the end through GET /api/v1/usage.
const (
	compactEvery  = 4
	compactBudget = 800
)

func compactAgent(i int) bool { return i%compactEvery == 1 }

// withSmallHistory gives the agent's agent.yaml a small history budget.
func withSmallHistory(dir string) error {
	p := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	const at = "    max_tool_iterations: 10\n"
	if !strings.Contains(string(data), at) {
		return fmt.Errorf("%s: the template has no %q to add a history budget after", p, strings.TrimSpace(at))
	}
	spec := strings.Replace(string(data), at, at+fmt.Sprintf("    context:\n      max_history_tokens: %d\n", compactBudget), 1)
	return os.WriteFile(p, []byte(spec), 0o644)
}

// summaryCalls counts the summary requests the fake model answered.
func summaryCalls(reqs []llmtest.RecordedRequest) int {
	n := 0
	for _, r := range reqs {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "You summarise a conversation") {
			n++
		}
	}
	return n
}

// ledger reads the usage ledger's totals.
func ledger(c *http.Client, base string) (calls, tokens int64, err error) {
	var body struct {
		Total struct {
			Calls int64 `json:"calls"`
			Total int64 `json:"total_tokens"`
		} `json:"total"`
	}
	if err := getJSON(c, base+"/api/v1/usage", &body); err != nil {
		return 0, 0, err
	}
	return body.Total.Calls, body.Total.Total, nil
}
