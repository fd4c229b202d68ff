package lite

import (
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

var _ httpapi.Usage = (*App)(nil)

// UsageLocation is the time zone usage is counted in: scheduler.timezone,
// else the system's.
func (a *App) UsageLocation() *time.Location { return a.Config.Scheduler.Location() }

// ReadUsage reads the usage ledger with the config's time zone and
// prices. It reads the database directly, beside the loop (bbolt readers
// do not wait for its writes).
func (a *App) ReadUsage(_ context.Context, q runtime.UsageQuery) (runtime.UsageReport, error) {
	q.Location, q.Prices = a.UsageLocation(), a.Config.RuntimePrices()
	return runtime.ReadUsage(a.Store, q)
}
