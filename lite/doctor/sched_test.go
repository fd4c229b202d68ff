package doctor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

func TestDoctor_Schedules(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	assert.Empty(t, schedulesCheck(cfg), "no database yet")
	st, err := storage.Open(cfg.DBPath(), &storage.Options{NoSync: true}) // as a daemon does
	require.NoError(t, err)
	at := time.Now().Add(time.Hour)
	_, err = sched.New(sched.Options{DB: sched.FromStore(st)}).Create(context.Background(), sched.Schedule{Agent: "assistant", Timing: sched.Timing{At: &at},
		Destination: sched.Destination{SessionID: "session_x"}, Payload: sched.Payload{Kind: sched.KindMessage, Text: "hi"}})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	checks := schedulesCheck(cfg)
	require.Len(t, checks, 1)
	assert.Equal(t, "ok", checks[0].Status)
	assert.Contains(t, checks[0].Detail, "1 active, next at "+at.In(time.Local).Format(time.DateTime))
}
