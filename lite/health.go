package lite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// Health probe bounds: every probe of one refresh ends within
// healthTimeout, and a refresh serves healthTTL of requests, so a page
// reloaded in a loop reaches Ollama twice a minute at most.
const (
	healthTimeout = 2 * time.Second
	healthTTL     = 30 * time.Second
)

// healthProbe gives GET /api/v1/health doctor's checks that a running
// daemon can make without opening its database again: the model servers
// of the loaded agents (the default agent when none is), the host facts
// (memory, disk, load, the board's temperature and throttling), the
// sandbox and the schedules; and the host facts themselves. It starts nothing
// of its own: a refresh runs on the request that finds the cache stale,
// waits for its probes, and leaves no goroutine behind.
type healthProbe struct {
	app     *App
	timeout time.Duration
	ttl     time.Duration
	now     func() time.Time // a test seam

	// mu is held through a refresh: concurrent requests wait for it and
	// share its result instead of probing again.
	mu     sync.Mutex
	at     time.Time
	checks []httpapi.HealthCheck
	host   *httpapi.HostFacts
}

func newHealthProbe(app *App) *healthProbe {
	return &healthProbe{app: app, timeout: healthTimeout, ttl: healthTTL, now: time.Now}
}

// facts is httpapi.Options.Health.
func (h *healthProbe) facts(ctx context.Context) httpapi.HealthFacts {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := h.now(); h.checks == nil || now.Sub(h.at) >= h.ttl || now.Before(h.at) {
		// The result is cached for others: a client that leaves must not
		// cut the probes short.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeout)
		h.checks, h.host = h.refresh(ctx)
		cancel()
		h.at = now
	}
	return httpapi.HealthFacts{AgentsLoaded: h.app.Agents.Loaded(), Checks: h.checks, Host: h.host}
}

// refresh runs the checks; the slow ones (the model servers, the
// sandbox) side by side, all bounded by ctx. The host facts are read once,
// for their checks and the report's host object.
func (h *healthProbe) refresh(ctx context.Context) ([]httpapi.HealthCheck, *httpapi.HostFacts) {
	cfg := h.app.Config
	var providers []Check
	var sandbox Check
	var wg sync.WaitGroup
	wg.Go(func() { providers = providerChecks(ctx, h.probedAgents()) })
	wg.Go(func() { sandbox = sandboxCheck(ctx, cfg) })
	facts := h.app.host.Read(ctx, cfg.DataDir)
	local := append(factChecks(cfg, facts, false), h.schedulesCheck())
	wg.Wait()
	out := make([]httpapi.HealthCheck, 0, len(providers)+len(local)+1)
	for _, c := range append(append(providers, local...), sandbox) {
		out = append(out, httpapi.HealthCheck{Name: c.Name, Status: c.Status, Detail: c.Detail, Fix: c.Fix})
	}
	return out, hostReport(facts)
}

// probedAgents are the specs of the loaded agents, or of the default
// agent when none is loaded yet; an agent whose files do not load is left
// out (the agent list says what is wrong with it).
func (h *healthProbe) probedAgents() []*agents.Agent {
	c := h.app.Agents
	out := c.LoadedSpecs()
	if len(out) == 0 {
		if a, err := c.ReadSpec(h.app.Config.Runtime.DefaultAgent); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// schedulesCheck is doctor's, from the running scheduler rather than the
// database file.
func (h *healthProbe) schedulesCheck() Check {
	active, next := h.app.Schedules().Stats()
	loc := h.app.Config.Scheduler.Location()
	switch {
	case active == 0:
		return ok("schedules", "none active")
	case next.IsZero():
		return ok("schedules", fmt.Sprintf("%d active, times read in %s", active, loc))
	}
	return ok("schedules", fmt.Sprintf("%d active, next at %s (%s)", active, next.In(loc).Format(time.DateTime), loc))
}
