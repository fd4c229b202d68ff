package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/tasks"
	"github.com/agnx-lite/agnx-lite/storage"
)

// taskServer serves a real task store on a fresh database.
func taskServer(t *testing.T) (*httptest.Server, *httpapi.Client, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	store := tasks.New(tasks.Options{DB: tasks.FromStore(st), Dir: filepath.Join(dir, "tasks")})
	api := httpapi.New(httpapi.Options{Tasks: store, KeepAlive: -1})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); srv.Close() })
	return srv, httpapi.NewClient(srv.URL, httpapi.ClientOptions{}), filepath.Join(dir, "tasks")
}

func TestTasks_HTTPHappyPath(t *testing.T) {
	srv, c, _ := taskServer(t)
	ctx := context.Background()
	one, err := c.AddTask(ctx, httpapi.TaskInput{Title: ptr("collect"), Priority: ptr("high"), Agent: ptr("researcher")})
	require.NoError(t, err)
	assert.Equal(t, "T-1", one.ID)
	assert.Equal(t, "person", one.History[0].By)
	_, err = c.AddTask(ctx, httpapi.TaskInput{Title: ptr("write"), After: &[]string{"T-1"}})
	require.NoError(t, err)

	res, err := http.Post(srv.URL+"/api/v1/tasks", "application/json", strings.NewReader(`{"board":"ops","title":"deploy"}`))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusCreated, res.StatusCode)
	assert.Equal(t, "/api/v1/tasks/ops/T-1", res.Header.Get("Location"))

	list, err := c.Tasks(ctx, tasks.Filter{})
	require.NoError(t, err)
	require.Len(t, list.Tasks, 3)
	list, err = c.Tasks(ctx, tasks.Filter{Board: "default", Agent: "researcher", Status: tasks.Todo})
	require.NoError(t, err)
	require.Len(t, list.Tasks, 1)

	moved, err := c.PatchTask(ctx, "default", "t-1", httpapi.TaskInput{Status: "in_progress", Comment: "started", Version: 1})
	require.NoError(t, err)
	assert.Equal(t, tasks.InProgress, moved.Status)
	assert.Equal(t, "todo → in_progress; note: started", moved.History[1].What)
	got, err := c.Task(ctx, "default", "T-1")
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version)
}

func TestTasks_HTTPErrors(t *testing.T) {
	srv, c, dir := taskServer(t)
	ctx := context.Background()
	_, err := c.AddTask(ctx, httpapi.TaskInput{Title: ptr("one")})
	require.NoError(t, err)
	_, err = c.AddTask(ctx, httpapi.TaskInput{Title: ptr("two"), After: &[]string{"T-1"}})
	require.NoError(t, err)

	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown task", "GET", "/api/v1/tasks/default/T-9", "", 404, "task_not_found"},
		{"blocked move", "PATCH", "/api/v1/tasks/default/T-2", `{"status":"in_progress"}`, 409, "task_conflict"},
		{"stale version", "PATCH", "/api/v1/tasks/default/T-1", `{"title":"x","version":7}`, 409, "task_conflict"},
		{"cycle", "PATCH", "/api/v1/tasks/default/T-1", `{"after":["T-2"]}`, 422, "task_invalid"},
		{"bad status", "PATCH", "/api/v1/tasks/default/T-1", `{"status":"later"}`, 422, "task_invalid"},
		{"no title", "POST", "/api/v1/tasks", `{}`, 422, "task_invalid"},
		{"bad start", "POST", "/api/v1/tasks", `{"title":"x","start_at":"soon"}`, 422, "task_invalid"},
		{"not json", "POST", "/api/v1/tasks", `{`, 400, "invalid_request"},
		{"bad board", "GET", "/api/v1/tasks?board=No%20Board", "", 400, "invalid_request"},
		{"bad status filter", "GET", "/api/v1/tasks?status=soon", "", 400, "invalid_request"},
		{"bad board path", "GET", "/api/v1/tasks/No%20Board/T-1", "", 422, "task_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, tc.status, res.StatusCode)
			var p struct{ Code, Detail, Title string }
			require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
			assert.Equal(t, tc.code, p.Code)
			assert.NotEmpty(t, p.Detail)
			assert.NotEmpty(t, p.Title)
		})
	}

	// A bad edit of the board's file is listed with its line.
	p := filepath.Join(dir, "default.md")
	text, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(text, "stray line\n"...), 0o600))
	list, err := c.Tasks(ctx, tasks.Filter{Board: "default"})
	require.NoError(t, err)
	require.Len(t, list.FileErrors, 1)
	assert.Regexp(t, `^tasks/default\.md:\d+: this line is not a task`, list.FileErrors[0])
}

func TestTasks_HTTPNotServed(t *testing.T) {
	api := httpapi.New(httpapi.Options{KeepAlive: -1})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); srv.Close() })
	res, err := http.Get(srv.URL + "/api/v1/tasks")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

func ptr[T any](v T) *T { return &v }
