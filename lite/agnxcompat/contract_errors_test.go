package agnxcompat

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func (k *contract) unknownFields(t *testing.T) {
	r, err := k.c.raw("POST", "/api/v1/sessions", "application/json", []byte(`{"agent":"helper","color":"blue","n":null}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, "§6: unknown body fields are ignored; got %s", r)
	s := decodeAs[getSessionResponse](t, r, "§6 POST sessions")
	r, err = k.c.raw("POST", "/api/v1/sessions/"+*s.SessionID+"/messages", "application/json",
		[]byte(`{"content":"extra","attachments":[],"meta":{"a":1}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "§6: unknown body fields are ignored; got %s", r)
}

// postSession posts body with contentType to /api/v1/sessions.
func (k *contract) postSession(t *testing.T, contentType, body string) httpResult {
	t.Helper()
	r, err := k.c.raw("POST", "/api/v1/sessions", contentType, []byte(body))
	require.NoError(t, err)
	return r
}

func (k *contract) unsupportedMediaType(t *testing.T) {
	r := k.postSession(t, "text/plain", `{"agent":"helper"}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, r.Status, "§6: a body without Content-Type: application/json ⇒ 415; got %s", r)
	r = k.postSession(t, "", `{"agent":"helper"}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, r.Status, "§6: a body without a content type ⇒ 415; got %s", r)
}

func (k *contract) malformed(t *testing.T) {
	r := k.postSession(t, "application/json", `{"agent":`)
	assert.Equal(t, http.StatusBadRequest, r.Status, "§6: malformed JSON ⇒ 400; got %s", r)
}

func (k *contract) wrongShape(t *testing.T) {
	for name, body := range map[string]string{
		"agent not a string": `{"agent":5}`,
		"agent missing":      `{}`,
		"body an array":      `["helper"]`,
	} {
		r := k.postSession(t, "application/json", body)
		assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "§6: wrong shape (%s) ⇒ 422; got %s", name, r)
	}
	id := k.session(t, "helper")
	r, err := k.c.raw("POST", "/api/v1/sessions/"+id+"/approve", "application/json",
		[]byte(`{"call_id":"c","command":"ls","decision":"maybe"}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "§6: a wrong enum (decision) ⇒ 422; got %s", r)
	r, err = k.c.raw("POST", "/api/v1/sessions/"+id+"/messages", "application/json", []byte(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "§6: content missing ⇒ 422; got %s", r)
}

func (k *contract) tooLarge(t *testing.T) {
	id := k.session(t, "helper")
	body := `{"content":"` + strings.Repeat("a", 2<<20+1024) + `"}`
	r, err := k.c.raw("POST", "/api/v1/sessions/"+id+"/messages", "application/json", []byte(body))
	if err != nil {
		t.Fatalf("§6: a body over 2 MiB ⇒ 413, but the request failed: %v", err)
	}
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "§6: a body over 2 MiB ⇒ 413; got %d", r.Status)
}

func (k *contract) unknownSession(t *testing.T) {
	const id = "session_01JAAAAAAAAAAAAAAAAAAAAAAA"
	for _, call := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/sessions/" + id, nil},
		{"GET", "/api/v1/sessions/" + id + "/messages", nil},
		{"POST", "/api/v1/sessions/" + id + "/messages", sendMessageRequest{Content: "hi"}},
		{"POST", "/api/v1/sessions/" + id + "/stream", sendMessageRequest{Content: "hi"}},
		{"DELETE", "/api/v1/sessions/" + id, nil},
	} {
		r, err := k.c.request(call.method, call.path, call.body)
		require.NoError(t, err)
		assertProblem(t, r, 404, problemNotFound, "Not Found", call.method+" "+call.path)
	}
}
