package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
)

func TestParse_SchedulerTimezone(t *testing.T) {
	if _, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Skip("no zoneinfo on this system")
	}
	c, err := Parse("agnx.yaml", []byte("scheduler:\n  timezone: Europe/Berlin\n"))
	require.NoError(t, err)
	assert.Equal(t, "Europe/Berlin", c.Scheduler.Location().String())

	c, err = Parse("agnx.yaml", []byte("server:\n  port: 8080\n"))
	require.NoError(t, err)
	assert.Same(t, time.Local, c.Scheduler.Location(), "unset: the system's zone")

	for _, tz := range []string{"Mars/Olympus_Mons", "Europe/ Berlin", "../../etc/passwd", string(make([]byte, 300))} {
		_, err = Parse("agnx.yaml", []byte("server:\n  port: 8080\nscheduler:\n  timezone: \""+tz+"\"\n"))
		var ae *agents.Error
		require.ErrorAs(t, err, &ae, "%q", tz)
		assert.Equal(t, 4, ae.Line, "%q: the line of the key", tz)
		assert.Contains(t, ae.Msg, "scheduler.timezone", "%q", tz)
		assert.Contains(t, ae.Msg, "Europe/Berlin", "%q: the error shows a good name", tz)
	}
}

// An Agnx duragent.yaml (which has no scheduler key) loads unchanged; the
// key added beside Agnx's keys works there too.
func TestLoad_DuragentWithScheduler(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "duragent.yaml")
	require.NoError(t, os.WriteFile(p, []byte("server:\n  port: 8090\n"), 0o600))
	c, err := Load(p)
	require.NoError(t, err)
	assert.Empty(t, c.Scheduler.Timezone)
	require.NoError(t, os.WriteFile(p, []byte("server:\n  port: 8090\nscheduler:\n  timezone: UTC\n"), 0o600))
	c, err = Load(p)
	require.NoError(t, err)
	assert.Equal(t, time.UTC.String(), c.Scheduler.Location().String())
	assert.Empty(t, c.Warnings, "scheduler is a known key")
}

// scheduler.max_turns_per_hour is read, defaults to the scheduler's 60,
// and out of its range is refused at its line.
func TestParse_SchedulerTurnCeiling(t *testing.T) {
	c, err := Parse("agnx.yaml", []byte("scheduler:\n  max_turns_per_hour: 12\n"))
	require.NoError(t, err)
	assert.Equal(t, 12, c.Scheduler.MaxTurnsPerHour)
	c, err = Parse("agnx.yaml", []byte("server:\n  port: 8080\n"))
	require.NoError(t, err)
	assert.Zero(t, c.Scheduler.MaxTurnsPerHour, "unset: the scheduler's default")
	for _, n := range []string{"-1", "3601"} {
		_, err = Parse("agnx.yaml", []byte("server:\n  port: 8080\nscheduler:\n  max_turns_per_hour: "+n+"\n"))
		var ae *agents.Error
		require.ErrorAs(t, err, &ae, n)
		assert.Equal(t, 4, ae.Line)
		assert.Equal(t, "scheduler.max_turns_per_hour "+n+" is out of range: give 1 to 3600 (0 or unset: 60)", ae.Msg)
	}
}
