package lite

import (
	"slices"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// Schedule run outcomes as /metrics counts them: what the daemon saw.
// fired: a run's message was stored; error: a firing stored nothing (the
// service retries it or goes on); ok and failed: how a task's turn ended;
// dropped: a task's outcome that could not be queued. Apart from those,
// the runs the service skipped, by reason (missed while down, the agent's
// turn ceiling, its daily token budget), and those it held back to keep
// an agent's runs 10 s apart.
func writeSched(p *promWriter, app *App) {
	svc, runs := app.Schedules(), app.sched.Runs()
	active, _ := svc.Stats()
	p.gauge("agnx_schedules_active", "Active schedules.", float64(active))
	p.family("agnx_schedule_runs_total", "counter", "Schedule runs since the start, by outcome (fired, error, ok, failed, dropped).")
	for _, c := range []struct {
		outcome string
		n       uint64
	}{{"dropped", runs.Dropped}, {"error", runs.Errors}, {"failed", runs.Failed},
		{"fired", runs.Fired}, {"ok", runs.OK}} {
		p.sample("agnx_schedule_runs_total", float64(c.n), "outcome", c.outcome)
	}
	counts := svc.Counts()
	p.family("agnx_schedule_runs_skipped_total", "counter",
		"Schedule runs skipped since the start, by reason (missed, turn_ceiling, token_budget).")
	reasons := []string{sched.SkipMissed, runtime.CodeTokenBudget, sched.SkipTurnCeiling}
	for r := range counts.Skipped {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		p.sample("agnx_schedule_runs_skipped_total", float64(counts.Skipped[r]), "reason", r)
	}
	p.family("agnx_schedule_runs_held_total", "counter", "Schedule runs held back to keep an agent's runs 10 s apart.")
	p.sample("agnx_schedule_runs_held_total", float64(counts.Held))
}
