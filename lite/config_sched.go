package lite

import (
	"strings"
	"time"
)

// SchedulerConfig is how schedules are read (an agnx-lite extension; Agnx
// reads cron in UTC).
type SchedulerConfig struct {
	// Timezone is the IANA zone ("Europe/Berlin") cron expressions and
	// active hours are read in when a schedule names none; empty: the
	// system's (TZ, else /etc/localtime).
	Timezone string `yaml:"timezone"`
}

// Location is the zone of scheduler.timezone, or the system's. Validate
// has checked the name.
func (s *SchedulerConfig) Location() *time.Location {
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
// knows (the Go binary embeds none: it reads /usr/share/zoneinfo).
func (c *Config) validateScheduler() error {
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
