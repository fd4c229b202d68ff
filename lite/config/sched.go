package config

import (
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// Scheduler is how schedules are read (an agnx-lite extension; Agnx
// reads cron in UTC).
type Scheduler struct {
	// Timezone is the IANA zone ("Europe/Berlin") cron expressions and
	// active hours are read in when a schedule names none; empty: the
	// system's (TZ, else /etc/localtime).
	Timezone string `yaml:"timezone"`
	// MaxTurnsPerHour bounds the turns one agent's schedules and
	// heartbeat start in any hour (past it a run is skipped, with the
	// reason in its run log); 0: sched.DefaultMaxTurnsPerHour (60).
	MaxTurnsPerHour int `yaml:"max_turns_per_hour"`
}

// Location is the zone of scheduler.timezone, or the system's. Validate
// has checked the name.
func (s *Scheduler) Location() *time.Location {
	if s.Timezone == "" {
		return time.Local
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		return time.Local
	}
	return loc
}

// maxZoneName bounds scheduler.timezone: IANA names are short.
const maxZoneName = 64

// validateScheduler checks scheduler.timezone names a zone this system
// knows (the Go binary embeds none: it reads /usr/share/zoneinfo), and
// the turn ceiling's range.
func (c *Config) validateScheduler() error {
	if n := c.Scheduler.MaxTurnsPerHour; n < 0 || n > sched.MaxTurnsPerHourLimit {
		return c.errorf("scheduler.max_turns_per_hour", "scheduler.max_turns_per_hour %d is out of range: give 1 to %d (0 or unset: %d)",
			n, sched.MaxTurnsPerHourLimit, sched.DefaultMaxTurnsPerHour)
	}
	tz := c.Scheduler.Timezone
	if tz == "" {
		return nil
	}
	if len(tz) > maxZoneName || strings.ContainsAny(tz, " \t\r\n") {
		return c.errorf("scheduler.timezone", "scheduler.timezone %q is not a time zone name: use an IANA name such as Europe/Berlin or UTC", clipText(tz, maxZoneName))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return c.errorf("scheduler.timezone", "scheduler.timezone %q is not a time zone this system knows: use an IANA name such as Europe/Berlin or UTC (install tzdata if it is missing)", tz)
	}
	return nil
}

// clipText cuts s to n bytes for an error message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
