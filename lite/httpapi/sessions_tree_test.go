package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// importChild stores a subagent session of parent, as the agent tool's
// spawn leaves one (session_start with a spawn link).
func importChild(t *testing.T, e *apiEnv, parent string) string {
	t.Helper()
	at := time.Now().Add(-time.Minute)
	info, err := e.loop.ImportSession(context.Background(), []runtime.Event{
		{Type: runtime.EvSessionStart, Agent: "assistant", Time: at,
			Spawn: &runtime.Spawn{Parent: parent, Call: "call_1", Depth: 1, Ceiling: []string{"assistant"}}},
		{Type: runtime.EvUserMessage, Content: "look into it", Time: at},
	})
	require.NoError(t, err)
	require.Equal(t, parent, info.Parent)
	return info.ID
}

// A child carries parent_id in the list and on GET; ?parent= lists one
// session's children; sessions nobody spawned have no parent_id at all.
func TestSessions_Tree(t *testing.T) {
	e := newAPIEnv(t, llmtest.Echo())
	parent, other := e.session(), e.session()
	child := importChild(t, e, parent)

	var list struct{ Sessions []map[string]any }
	e.call("GET", "/api/v1/sessions", "", http.StatusOK, &list)
	require.Len(t, list.Sessions, 3)
	byID := map[string]map[string]any{}
	for _, s := range list.Sessions {
		byID[s["session_id"].(string)] = s
	}
	assert.Equal(t, parent, byID[child]["parent_id"])
	assert.NotContains(t, byID[parent], "parent_id", "omitted when empty: Agnx's session shape")
	for _, key := range []string{"session_id", "agent", "status", "created_at", "updated_at", "turns", "last_seq", "usage"} {
		assert.Contains(t, byID[child], key, "a child keeps every field of a session")
	}

	var got map[string]any
	e.call("GET", "/api/v1/sessions/"+child, "", http.StatusOK, &got)
	assert.Equal(t, parent, got["parent_id"])

	e.call("GET", "/api/v1/sessions?parent="+parent, "", http.StatusOK, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, child, list.Sessions[0]["session_id"])
	e.call("GET", "/api/v1/sessions?parent="+other, "", http.StatusOK, &list)
	assert.Empty(t, list.Sessions)
	assert.NotNil(t, list.Sessions, "[] not null")
	e.call("GET", "/api/v1/sessions?parent="+parent+"&agent=nobody", "", http.StatusOK, &list)
	assert.Empty(t, list.Sessions, "both filters apply")

	// The Go client (the CLI through the daemon) reads the link back.
	infos, err := httpapi.NewClient(e.srv.URL, httpapi.ClientOptions{APIToken: e.opts.APIToken}).Sessions(context.Background())
	require.NoError(t, err)
	parents := map[string]string{}
	for _, i := range infos {
		parents[i.ID] = i.Parent
	}
	assert.Equal(t, map[string]string{parent: "", other: "", child: parent}, parents)
}
