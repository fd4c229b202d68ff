package telegram_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

// Failed polls back off exponentially with jitter (0.5–1 s, then 1–2 s,
// then 2–4 s), on the real clock's schedule, and a poll that succeeds
// long-polls with no backoff: the whole app runs in a synctest bubble
// with the Bot API answered in process.
func TestPoll_BackoffPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := tgtest.NewInProcess()
		defer tg.Close()
		cfg := testConfig(t.TempDir(), "http://telegram.test")
		_, err := config.Init(cfg)
		require.NoError(t, err)
		app, err := lite.Open(cfg, &lite.Options{NoSync: true})
		require.NoError(t, err)
		for range 3 {
			tg.Fail("getUpdates", tgtest.Fault{Code: 502, Description: "Bad Gateway"})
		}
		gw, err := lite.NewTelegram(app, telegram.Options{HTTPClient: &http.Client{Transport: tg.Transport()}})
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, gw.Start(context.Background()))
		polls := func(at time.Duration) int {
			time.Sleep(time.Until(start.Add(at)))
			synctest.Wait()
			return len(tg.Calls("getUpdates"))
		}
		assert.Equal(t, 1, polls(0))
		assert.Equal(t, 1, polls(499*time.Millisecond), "the first backoff is at least 0.5 s")
		assert.Equal(t, 2, polls(time.Second), "and at most 1 s")
		assert.Equal(t, 2, polls(1499*time.Millisecond), "the second at least 1 s")
		assert.Equal(t, 3, polls(3*time.Second), "and at most 2 s")
		assert.Equal(t, 3, polls(3499*time.Millisecond), "the third at least 2 s")
		assert.Equal(t, 4, polls(7*time.Second), "and at most 4 s")
		assert.Equal(t, 4, polls(30*time.Second), "a poll that works waits for updates, not for a backoff")
		require.NoError(t, gw.Stop(context.Background()))
		require.NoError(t, app.Close())
	})
}
