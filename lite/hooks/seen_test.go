package hooks

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Remembered ids expire after a week, pruned by later deliveries.
func TestHooks_SeenIdsExpire(t *testing.T) {
	e := newUnit(t)
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	status := func(delivery string) string {
		t.Helper()
		r, err := e.github(delivery)
		require.NoError(t, err)
		return r.Status
	}
	require.Equal(t, "accepted", status("old"))
	key := seenKey("github", "old")
	v, err := e.loop.KV(context.Background(), key)
	require.NoError(t, err)
	require.NotNil(t, v)

	clock = clock.Add(ReplayWindow + time.Hour)
	require.Equal(t, "accepted", status("new"))
	v, err = e.loop.KV(context.Background(), key)
	require.NoError(t, err)
	assert.Nil(t, v, "pruned by the next delivery")
	assert.Equal(t, "accepted", status("old"), "forgotten, so new again")
	assert.Equal(t, "duplicate", status("new"))
}
