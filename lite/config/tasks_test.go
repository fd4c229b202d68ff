package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfig_Tasks(t *testing.T) {
	cfg := Default()
	require.NoError(t, cfg.validateTasks())
	assert.Equal(t, 30, int(cfg.Tasks.Interval().Seconds()))
	cfg.Tasks = Tasks{Start: TasksStartNow, CheckSeconds: 10}
	require.NoError(t, cfg.validateTasks())
	assert.Equal(t, 10, int(cfg.Tasks.Interval().Seconds()))
	cfg.Tasks = Tasks{Start: "later"}
	assert.ErrorContains(t, cfg.Validate(), `tasks.start "later" is not manual or now: use one of them`)
	cfg.Tasks = Tasks{CheckSeconds: 1}
	assert.ErrorContains(t, cfg.Validate(), "tasks.check_seconds 1 is not between 5 and 3600")
}
