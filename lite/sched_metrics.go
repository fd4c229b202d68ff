package lite

// Schedule run outcomes as /metrics counts them: what the daemon saw.
// fired: a run's message was stored; error: a firing stored nothing (the
// service retries it or goes on); ok and failed: how a task's turn ended;
// dropped: a task's outcome that could not be queued.
func writeSched(p *promWriter, app *App) {
	h := app.sched
	active, _ := h.svc.Stats()
	p.gauge("agnx_schedules_active", "Active schedules.", float64(active))
	p.family("agnx_schedule_runs_total", "counter", "Schedule runs since the start, by outcome (fired, error, ok, failed, dropped).")
	for _, c := range []struct {
		outcome string
		n       uint64
	}{{"dropped", h.dropped.Load()}, {"error", h.fireErrors.Load()}, {"failed", h.failed.Load()},
		{"fired", h.fired.Load()}, {"ok", h.ok.Load()}} {
		p.sample("agnx_schedule_runs_total", float64(c.n), "outcome", c.outcome)
	}
}
