package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// storeUsage is httpapi.Usage over the env's store, set once it is open.
type storeUsage struct{ st **storage.Store }

func (u storeUsage) UsageLocation() *time.Location { return time.Local }

func (u storeUsage) ReadUsage(_ context.Context, q runtime.UsageQuery) (runtime.UsageReport, error) {
	return runtime.ReadUsage(*u.st, q)
}

// A turn past the agent's daily budget answers 429 token_budget with the
// sentence the chat gets; the usage endpoint shows the calls counted.
func TestUsage_BudgetOverHTTP(t *testing.T) {
	var st *storage.Store
	e := newAPIEnv(t, func(llmtest.RecordedRequest) llmtest.Reply {
		return llmtest.Reply{Text: "hello", Usage: llmtest.Usage{Prompt: 40, Completion: 2}}
	}, func(o *httpapi.Options) { o.Usage = storeUsage{&st} })
	st = e.st
	file := filepath.Join(e.cfg.AgentsDir, "assistant", "agent.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "# daily_token_budget: 200000", "daily_token_budget: 30", 1)
	require.NotEqual(t, string(data), edited, "the template documents daily_token_budget")
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))

	sid := e.session()
	e.call("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`, http.StatusOK, nil)
	p := requireProblem(t, e.do("POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"again"}`),
		http.StatusTooManyRequests, "token_budget")
	assert.Contains(t, p.Detail, "assistant has used its daily token budget (42 of 30 tokens): the budget resets at midnight")
	assert.Len(t, e.fake.Requests(), 1)

	var rep runtime.UsageReport
	e.call("GET", "/api/v1/usage?by=agent&since=today", "", http.StatusOK, &rep)
	require.Len(t, rep.Rows, 1)
	assert.Equal(t, runtime.UsageRow{Key: "assistant", Calls: 1, Input: 40, Output: 2, Total: 42}, rep.Rows[0])
}
