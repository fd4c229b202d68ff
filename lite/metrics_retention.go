package lite

import (
	"github.com/agnx-lite/agnx-lite/lite/upkeep"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// writeRetention writes what retention did since the daemon started, and
// the size of the archive files in st (one directory listing).
func writeRetention(p *promWriter, r *upkeep.Retention, st *storage.Store) {
	if r == nil {
		return
	}
	t := r.Totals()
	for _, c := range []struct {
		name, help string
		v          int64
	}{
		{"agnx_sessions_expired_total", "Sessions ended by their ttl_hours.", t.Expired},
		{"agnx_events_pruned_total", "Events removed from the database by retention (discarded or archived).", t.Pruned},
		{"agnx_events_archived_total", "Events moved to the sessions' archive files by retention.", t.Archived},
	} {
		p.family(c.name, "counter", c.help)
		p.sample(c.name, float64(c.v))
	}
	if size, _, err := runtime.ArchiveSize(st); err == nil {
		p.gauge("agnx_archive_bytes", "Size of the sessions' archive files (archive/*.jsonl.gz).", float64(size))
	}
}
