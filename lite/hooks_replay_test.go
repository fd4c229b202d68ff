package lite

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/hooks"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// A captured signed delivery sent again with a new delivery id, or with
// none, is the same signed body: it runs nothing, also after a restart,
// until the replay window has passed.
func TestHooks_ReplayedBodyWithAnotherIDRunsOnce(t *testing.T) {
	e := newHookEnv(t, nil)
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	body := `{"repository": {"full_name": "o/r"}, "action": "opened"}`
	send := func(e *hookEnv, h map[string]string) hookAnswer {
		h["X-Hub-Signature-256"] = sign(body)
		return e.post("github", body, h)
	}
	a := send(e, map[string]string{"X-GitHub-Delivery": "first"})
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	sid := a.body["session_id"].(string)
	e.userMessages(sid)

	for name, h := range map[string]map[string]string{
		"new id":      {"X-GitHub-Delivery": "forged-new-id"},
		"no id":       {},
		"another key": {"Idempotency-Key": "k-1"},
	} {
		b := send(e, h)
		assert.Equal(t, http.StatusOK, b.status, name)
		assert.Equal(t, "duplicate", b.body["status"], name)
		assert.Equal(t, sid, b.body["session_id"], name)
	}

	// The memory is the database's: a new daemon on the same data dir
	// still knows the body.
	e.restart()
	b := send(e, map[string]string{"X-GitHub-Delivery": "after-restart"})
	assert.Equal(t, http.StatusOK, b.status, "remembered across a restart")
	assert.Equal(t, "duplicate", b.body["status"])
	assert.Equal(t, 1, len(e.model.Requests()), "no replay ran a turn")

	clock = clock.Add(hooks.ReplayWindow + time.Hour)
	require.Equal(t, http.StatusAccepted, e.github("prunes").status)
	b = send(e, map[string]string{"X-GitHub-Delivery": "much-later"})
	assert.Equal(t, http.StatusAccepted, b.status, "past the replay window the digest is forgotten, as ids are")
}

// A token hook's body is bound by no signature: the same body twice with
// two ids is two deliveries (a sensor that reports the same reading).
func TestHooks_TokenHookSameBodyTwice(t *testing.T) {
	e := newHookEnv(t, nil)
	body := `{"status": "green"}`
	auth := "Bearer " + hookToken
	a := e.post("ci", body, map[string]string{"Authorization": auth, "X-Delivery-ID": "1"})
	require.Equal(t, http.StatusAccepted, a.status, a.body)
	e.userMessages(a.body["session_id"].(string))
	b := e.post("ci", body, map[string]string{"Authorization": auth, "X-Delivery-ID": "2"})
	assert.Equal(t, http.StatusAccepted, b.status, b.body)
	c := e.post("ci", body, map[string]string{"Authorization": auth, "X-Delivery-ID": "2"})
	assert.Equal(t, http.StatusOK, c.status, "the id is still remembered")
}

// An unknown hook, a disabled one, a wrong or missing signature and a
// wrong or missing token get the same answer, so a caller cannot list
// the hooks; the log tells the owner which it was.
func TestHooks_NamesCannotBeEnumerated(t *testing.T) {
	e := newHookEnv(t, nil)
	body := `{"repository": {"full_name": "o/r"}, "action": "opened"}`
	cases := []struct {
		name, hook string
		header     map[string]string
		logged     string
	}{
		{"unknown", "nope", map[string]string{"X-Hub-Signature-256": sign(body)}, "no such hook"},
		{"disabled", "off", map[string]string{"X-Hub-Signature-256": sign(body)}, "disabled"},
		{"wrong signature", "github", map[string]string{"X-Hub-Signature-256": sign(body + " ")}, "does not match"},
		{"no signature", "github", nil, "malformed"},
		{"wrong token", "ci", map[string]string{"Authorization": "Bearer wrong-token-0123456"}, "wrong bearer token"},
		{"no token", "ci", nil, "wrong bearer token"},
	}
	var first hookAnswer
	for i, c := range cases {
		a := e.post(c.hook, body, c.header)
		assert.Equal(t, http.StatusUnauthorized, a.status, c.name)
		assert.Equal(t, c.hook, strings.TrimPrefix(a.body["instance"].(string), "/api/v1/hooks/"), c.name)
		delete(a.body, "instance") // the path the caller sent
		if i == 0 {
			first = a
			assert.Equal(t, httpapi.HookRefused, a.body["detail"])
			continue
		}
		assert.Equal(t, first.body, a.body, "%s answers as an unknown hook does", c.name)
		assert.Equal(t, first.header.Get("Content-Type"), a.header.Get("Content-Type"), c.name)
		assert.Equal(t, first.header.Get("Retry-After"), a.header.Get("Retry-After"), c.name)
	}
	log := e.logs.String()
	for _, c := range cases {
		assert.Contains(t, log, `"hook":"`+c.hook+`"`, c.name)
		assert.Contains(t, log, c.logged, c.name)
	}
	assert.Zero(t, e.sessions(), "nothing stored")
}
