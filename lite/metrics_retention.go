package lite

import "github.com/agnx-lite/agnx-lite/runtime"

// writeRetention writes what retention did since the daemon started, and
// the archive files' size (one directory listing).
func writeRetention(p *promWriter, r *retention) {
	if r == nil {
		return
	}
	for _, c := range []struct {
		name, help string
		v          int64
	}{
		{"agnx_sessions_expired_total", "Sessions ended by their ttl_hours.", r.expired.Load()},
		{"agnx_events_pruned_total", "Events removed from the database by retention (discarded or archived).", r.pruned.Load()},
		{"agnx_events_archived_total", "Events moved to the sessions' archive files by retention.", r.archived.Load()},
	} {
		p.family(c.name, "counter", c.help)
		p.sample(c.name, float64(c.v))
	}
	if size, _, err := runtime.ArchiveSize(r.st); err == nil {
		p.gauge("agnx_archive_bytes", "Size of the sessions' archive files (archive/*.jsonl.gz).", float64(size))
	}
}
