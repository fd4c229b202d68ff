package doctor

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
	"github.com/agnx-lite/agnx-lite/storage"
)

// schedulesCheck reports the active schedules and the next run, read from
// the database when no daemon holds it (`serve status` reports them
// then). Nothing is reported when no schedule is active.
func schedulesCheck(cfg *config.Config) []Check {
	if _, err := os.Stat(cfg.DBPath()); errors.Is(err, os.ErrNotExist) || config.ReadDaemon(cfg) != nil {
		return nil
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true})
	if err != nil {
		return nil // databaseCheck says why
	}
	defer st.Close()
	active, next := sched.New(sched.Options{DB: sched.FromStore(st), Location: cfg.Scheduler.Location()}).Stats()
	if active == 0 {
		return nil
	}
	detail := fmt.Sprintf("%d active, times read in %s", active, cfg.Scheduler.Location())
	if !next.IsZero() {
		detail = fmt.Sprintf("%d active, next at %s (%s)", active, next.In(cfg.Scheduler.Location()).Format(time.DateTime),
			cfg.Scheduler.Location())
	}
	c := ok("schedules", detail)
	if next.Before(time.Now()) && !next.IsZero() {
		c.Status, c.Fix = "warn", "start the daemon (agnx-lite serve): schedules fire only there; missed runs run once, late"
		c.Detail += ": overdue, no daemon is running"
	}
	return []Check{c}
}
