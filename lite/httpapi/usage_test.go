package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// fakeUsage answers every query with rep and keeps the last query.
type fakeUsage struct {
	mu   sync.Mutex
	last runtime.UsageQuery
	rep  runtime.UsageReport
}

func (f *fakeUsage) UsageLocation() *time.Location { return time.UTC }

func (f *fakeUsage) ReadUsage(_ context.Context, q runtime.UsageQuery) (runtime.UsageReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = q
	rep := f.rep
	rep.By, rep.Since, rep.Agent = q.By, q.Since, q.Agent
	return rep, nil
}

func (f *fakeUsage) query() runtime.UsageQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func TestUsage_Endpoint(t *testing.T) {
	cost := 0.42
	f := &fakeUsage{rep: runtime.UsageReport{
		Rows:   []runtime.UsageRow{{Key: "alice", Calls: 2, Input: 100, Output: 10, Reasoning: 4, Total: 110, CostUSD: &cost}},
		Total:  runtime.UsageRow{Key: "total", Calls: 2, Input: 100, Output: 10, Reasoning: 4, Total: 110, CostUSD: &cost},
		Priced: true,
	}}
	api := httpapi.New(httpapi.Options{Usage: f, KeepAlive: -1})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); srv.Close() })
	c := httpapi.NewClient(srv.URL, httpapi.ClientOptions{})
	ctx := context.Background()

	rep, err := c.Usage(ctx, "agent", "24h", "alice")
	require.NoError(t, err)
	assert.Equal(t, f.rep.Rows, rep.Rows)
	assert.True(t, rep.Priced)
	q := f.query()
	assert.Equal(t, runtime.UsageQuery{By: "agent", Agent: "alice", Since: q.Since}, q)
	assert.WithinDuration(t, time.Now().Add(-24*time.Hour), q.Since, time.Minute)

	_, err = c.Usage(ctx, "day", "2026-11-01", "")
	require.NoError(t, err)
	assert.True(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Equal(f.query().Since), "dates are read in the ledger's zone")

	// The wire form: snake_case keys, cost only where priced.
	resp, err := http.Get(srv.URL + "/api/v1/usage")
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	total := raw["total"].(map[string]any)
	assert.EqualValues(t, 110, total["total_tokens"])
	assert.EqualValues(t, 4, total["reasoning_tokens"])
	assert.EqualValues(t, 0.42, total["cost_usd"])
	assert.NotContains(t, raw, "since", "no since: everything kept")

	for _, bad := range []string{"?by=week", "?since=yesterday", "?since=-3d", "?agent=a%2Fb"} {
		resp, err := http.Get(srv.URL + "/api/v1/usage" + bad)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
	}
}

func TestUsage_NotServed(t *testing.T) {
	api := httpapi.New(httpapi.Options{KeepAlive: -1})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); srv.Close() })
	resp, err := http.Get(srv.URL + "/api/v1/usage")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
