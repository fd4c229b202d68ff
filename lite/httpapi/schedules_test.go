package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// fakeSchedules is an httpapi.Schedules over a map.
type fakeSchedules struct {
	mu       sync.Mutex
	byID     map[string]sched.Schedule
	runs     map[string][]sched.Run
	lastList [2]string // agent, all
	fail     error
}

func (f *fakeSchedules) List(_ context.Context, agent string, all bool) ([]sched.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastList = [2]string{agent, fmt.Sprint(all)}
	if f.fail != nil {
		return nil, f.fail
	}
	var out []sched.Schedule
	for _, s := range f.byID {
		if (agent == "" || s.Agent == agent) && (all || s.Status == sched.Active) {
			out = append(out, s)
		}
	}
	return out, nil
}

func (f *fakeSchedules) Get(_ context.Context, id string) (sched.Schedule, []sched.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.byID[id]
	if !ok {
		return sched.Schedule{}, nil, fmt.Errorf("schedule %s: %w", id, sched.ErrNotFound)
	}
	return s, f.runs[id], nil
}

func (f *fakeSchedules) Cancel(_ context.Context, id, agent string) (sched.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.byID[id]
	if !ok || (agent != "" && s.Agent != agent) {
		return sched.Schedule{}, sched.ErrNotFound
	}
	s.Status = sched.Cancelled
	f.byID[id] = s
	return s, nil
}

func (f *fakeSchedules) Stats() (int, time.Time) {
	return 1, time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
}

func scheduleServer(t *testing.T, s httpapi.Schedules) (*httptest.Server, *httpapi.Client) {
	t.Helper()
	api := httpapi.New(httpapi.Options{Schedules: s, KeepAlive: -1})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); srv.Close() })
	return srv, httpapi.NewClient(srv.URL, httpapi.ClientOptions{})
}

func TestSchedules_ListShowCancel(t *testing.T) {
	at := time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)
	f := &fakeSchedules{byID: map[string]sched.Schedule{
		"sched_a": {ID: "sched_a", Agent: "assistant", Status: sched.Active, Timing: sched.Timing{At: &at},
			Destination: sched.Destination{Gateway: "telegram", ChatID: "42"}, Payload: sched.Payload{Kind: sched.KindMessage, Text: "tea"},
			Next: at, Runs: 2},
		"sched_b": {ID: "sched_b", Agent: "helper", Status: sched.Completed, Timing: sched.Timing{EverySeconds: 60}},
	}, runs: map[string][]sched.Run{"sched_a": {
		{Due: at.Add(-time.Hour), Fired: at.Add(-time.Minute), Late: true, Missed: 3, Outcome: sched.RunFired},
		{Due: at.Add(-30 * time.Minute), Outcome: sched.RunSkipped},
	}}}
	_, c := scheduleServer(t, f)
	ctx := context.Background()

	list, err := c.Schedules(ctx, "", false)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "sched_a", list[0].ID)
	assert.Equal(t, "tea", list[0].Payload.Text)
	assert.Equal(t, [2]string{"", "false"}, f.lastList)

	list, err = c.Schedules(ctx, "helper", true)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, sched.Completed, list[0].Status)
	assert.Equal(t, [2]string{"helper", "true"}, f.lastList)

	d, err := c.Schedule(ctx, "sched_a")
	require.NoError(t, err)
	assert.Equal(t, 2, d.Runs, "the schedule's count stays beside its log")
	require.Len(t, d.Log, 2)
	assert.True(t, d.Log[0].Late)
	assert.Equal(t, 3, d.Log[0].Missed)
	assert.Equal(t, sched.RunSkipped, d.Log[1].Outcome)

	require.NoError(t, c.CancelSchedule(ctx, "sched_a"))
	assert.Equal(t, sched.Cancelled, f.byID["sched_a"].Status)

	for _, id := range []string{"sched_nope", strings.Repeat("x", 200), "bad%20id"} {
		_, err = c.Schedule(ctx, id)
		var pe *httpapi.ProblemError
		require.ErrorAs(t, err, &pe, id)
		assert.Equal(t, http.StatusNotFound, pe.Status, id)
		assert.Equal(t, "schedule_not_found", pe.Code, id)
		err = c.CancelSchedule(ctx, id)
		require.ErrorAs(t, err, &pe, id)
		assert.Equal(t, http.StatusNotFound, pe.Status, id)
	}
}

func TestSchedules_BadQueriesAndFailures(t *testing.T) {
	f := &fakeSchedules{byID: map[string]sched.Schedule{}}
	srv, c := scheduleServer(t, f)
	for _, q := range []string{"?all=maybe", "?agent=no%20such/agent", "?agent=" + strings.Repeat("a", 200)} {
		resp, err := http.Get(srv.URL + "/api/v1/schedules" + q)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", q, body)
		assert.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
	}
	resp, err := http.Get(srv.URL + "/api/v1/schedules")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `{"schedules": []}`, string(body), "none: an empty list, not null")

	f.fail = errors.New("the disk is on fire")
	_, err = c.Schedules(context.Background(), "", false)
	var pe *httpapi.ProblemError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusInternalServerError, pe.Status)

	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/v1/schedules/sched_a", nil)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestSchedules_NotServed(t *testing.T) {
	_, c := scheduleServer(t, nil)
	_, err := c.Schedules(context.Background(), "", false)
	var pe *httpapi.ProblemError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusNotFound, pe.Status)
	require.ErrorAs(t, c.CancelSchedule(context.Background(), "sched_a"), &pe)
	assert.Equal(t, http.StatusNotFound, pe.Status)
}

// A token guards the routes as the rest of /api/v1.
func TestSchedules_Guarded(t *testing.T) {
	api := httpapi.New(httpapi.Options{Schedules: &fakeSchedules{byID: map[string]sched.Schedule{}}, APIToken: "0123456789abcdef0123", KeepAlive: -1})
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		path := "/api/v1/schedules"
		if m == http.MethodDelete {
			path += "/sched_a"
		}
		req, _ := http.NewRequest(m, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, m)
	}
	c := httpapi.NewClient(srv.URL, httpapi.ClientOptions{APIToken: "0123456789abcdef0123"})
	_, err := c.Schedules(context.Background(), "", false)
	require.NoError(t, err)
}
