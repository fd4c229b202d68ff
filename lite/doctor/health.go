package doctor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// Health probe bounds: every probe of one refresh ends within
// HealthTimeout, and a refresh serves HealthTTL of requests, so a page
// reloaded in a loop reaches Ollama twice a minute at most.
const (
	HealthTimeout = 2 * time.Second
	HealthTTL     = 30 * time.Second
)

// Agents is the daemon's agent cache as the health report reads it.
type Agents interface {
	// LoadedCount is how many agents are built.
	LoadedCount() int
	// LoadedSpecs are the specs of the agents built, in name order.
	LoadedSpecs() []*agents.Agent
	// Spec reads one agent's spec without building it.
	Spec(name string) (*agents.Agent, error)
}

// Schedules is the daemon's scheduler as the health report reads it
// (*sched.Service).
type Schedules interface {
	// Stats returns how many schedules are active and when the next one
	// runs (zero when none will).
	Stats() (active int, next time.Time)
}

// HealthOptions is what a Health reads; Config, Agents, Schedules and
// Host are required.
type HealthOptions struct {
	Config    *config.Config
	Agents    Agents
	Schedules Schedules
	// Host reads the machine's facts (the daemon's one reader).
	Host *hostfacts.Reader
	// Timeout bounds one refresh's probes; 0 means HealthTimeout.
	Timeout time.Duration
	// Now is the clock of the cache; nil means time.Now (a test seam).
	Now func() time.Time
}

// Health gives GET /api/v1/health doctor's checks that a running daemon
// can make without opening its database again: the model servers of the
// loaded agents (the default agent when none is), the host facts
// (memory, disk, load, the board's temperature and throttling), the
// sandbox and the schedules; and the host facts themselves. It starts
// nothing of its own: a refresh runs on the request that finds the cache
// stale, waits for its probes, and leaves no goroutine behind.
type Health struct {
	o HealthOptions

	// mu is held through a refresh: concurrent requests wait for it and
	// share its result instead of probing again.
	mu     sync.Mutex
	at     time.Time
	checks []httpapi.HealthCheck
	host   *httpapi.HostFacts
}

// NewHealth is the health report over o.
func NewHealth(o HealthOptions) *Health {
	if o.Timeout <= 0 {
		o.Timeout = HealthTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Health{o: o}
}

// Facts is httpapi.Options.Health.
func (h *Health) Facts(ctx context.Context) httpapi.HealthFacts {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := h.o.Now(); h.checks == nil || now.Sub(h.at) >= HealthTTL || now.Before(h.at) {
		// The result is cached for others: a client that leaves must not
		// cut the probes short.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.o.Timeout)
		h.checks, h.host = h.refresh(ctx)
		cancel()
		h.at = now
	}
	return httpapi.HealthFacts{AgentsLoaded: h.o.Agents.LoadedCount(), Checks: h.checks, Host: h.host}
}

// refresh runs the checks; the slow ones (the model servers, the
// sandbox) side by side, all bounded by ctx. The host facts are read once,
// for their checks and the report's host object.
func (h *Health) refresh(ctx context.Context) ([]httpapi.HealthCheck, *httpapi.HostFacts) {
	cfg := h.o.Config
	var providers []Check
	var sandbox Check
	var wg sync.WaitGroup
	wg.Go(func() { providers = providerChecks(ctx, h.probedAgents()) })
	wg.Go(func() { sandbox = sandboxCheck(ctx, cfg) })
	facts := h.o.Host.Read(ctx, cfg.DataDir)
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
func (h *Health) probedAgents() []*agents.Agent {
	out := h.o.Agents.LoadedSpecs()
	if len(out) == 0 {
		if a, err := h.o.Agents.Spec(h.o.Config.Runtime.DefaultAgent); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// schedulesCheck is doctor's, from the running scheduler rather than the
// database file.
func (h *Health) schedulesCheck() Check {
	active, next := h.o.Schedules.Stats()
	loc := h.o.Config.Scheduler.Location()
	switch {
	case active == 0:
		return ok("schedules", "none active")
	case next.IsZero():
		return ok("schedules", fmt.Sprintf("%d active, times read in %s", active, loc))
	}
	return ok("schedules", fmt.Sprintf("%d active, next at %s (%s)", active, next.In(loc).Format(time.DateTime), loc))
}
