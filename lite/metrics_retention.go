package lite

// writeRetention writes what retention did since the daemon started.
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
}
