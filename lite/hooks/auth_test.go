package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// A refusal costs the same work for a name that is no hook as for a real
// hook's wrong secret or token: one HMAC over the body and one token
// comparison, whatever the name. Counted in allocations, which do not
// depend on the machine's speed.
func TestHookAuth_SameWorkForEveryName(t *testing.T) {
	signed := config.Hook{Secret: hookSecret, Signed: true}
	token := config.Hook{Token: hookToken}
	body := []byte(strings.Repeat(`{"a": 1}`, 1000))
	wrong := http.Header{"X-Hub-Signature-256": {sign("x")}, "Authorization": {"Bearer wrong-token-0123456"}}
	cost := func(h *config.Hook) float64 {
		return testing.AllocsPerRun(50, func() { _ = hookAuth(h, wrong, body) })
	}
	unknown := cost(nil)
	require.NotZero(t, unknown, "an unknown name does the HMAC work too")
	assert.Equal(t, unknown, cost(&signed), "a signed hook's refusal")
	assert.Equal(t, unknown, cost(&token), "a token hook's refusal")
	assert.Equal(t, "", hookAuth(&signed, http.Header{"X-Hub-Signature-256": {sign(string(body))}}, body))
	assert.Equal(t, "", hookAuth(&token, http.Header{"Authorization": {"Bearer " + hookToken}}, body))
	assert.NotEqual(t, "", hookAuth(nil, http.Header{"Authorization": {"Bearer " + string(decoyKey)}}, body), "the decoy opens nothing")
}

// Refusals are logged at most refusedLogPerMinute a minute: anyone can
// send them.
func TestHooks_RefusalLogBounded(t *testing.T) {
	e := newUnit(t)
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	for range refusedLogPerMinute + 5 {
		_, err := e.hooks.Deliver(context.Background(), "nope", http.Header{}, []byte(`{}`))
		require.Error(t, err)
	}
	assert.Equal(t, refusedLogPerMinute, strings.Count(e.logs.String(), "webhook refused"))
	clock = clock.Add(time.Minute)
	_, err := e.hooks.Deliver(context.Background(), "nope", http.Header{}, []byte(`{}`))
	require.Error(t, err)
	assert.Contains(t, e.logs.String(), `"refusals_not_logged":5`)
}
