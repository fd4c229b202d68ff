package lite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

func TestDoctor_Schedules(t *testing.T) {
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	assert.Empty(t, schedulesCheck(cfg), "no database yet")
	app, err := Open(cfg, &Options{NoSync: true})
	require.NoError(t, err)
	at := time.Now().Add(time.Hour)
	_, err = app.Schedules().Create(context.Background(), sched.Schedule{Agent: "assistant", Timing: sched.Timing{At: &at},
		Destination: sched.Destination{SessionID: "session_x"}, Payload: sched.Payload{Kind: sched.KindMessage, Text: "hi"}})
	require.NoError(t, err)
	require.NoError(t, app.Close())

	checks := schedulesCheck(cfg)
	require.Len(t, checks, 1)
	assert.Equal(t, "ok", checks[0].Status)
	assert.Contains(t, checks[0].Detail, "1 active, next at "+at.In(time.Local).Format(time.DateTime))
}
