package sched_test

import (
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// A cron expression in Agnx's six fields (seconds first) and its next runs
// in Berlin across the spring change, when 02:30 does not exist.
func ExampleParseCron() {
	c, err := sched.ParseCron("0 30 2 * * *")
	if err != nil {
		fmt.Println(err)
		return
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	at := time.Date(2026, 3, 28, 12, 0, 0, 0, berlin)
	for range 3 {
		at = c.Next(at, berlin)
		fmt.Println(at.Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// Sun 2026-03-29 03:00 CEST
	// Mon 2026-03-30 02:30 CEST
	// Tue 2026-03-31 02:30 CEST
}
