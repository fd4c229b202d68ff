package doctor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/hostfacts"
)

// fakeAgents is an agent cache with the agents given built, whose specs
// are read from cfg's agents folder.
type fakeAgents struct {
	cfg    *config.Config
	loaded []*agents.Agent
}

func (f fakeAgents) LoadedCount() int             { return len(f.loaded) }
func (f fakeAgents) LoadedSpecs() []*agents.Agent { return f.loaded }
func (f fakeAgents) Spec(name string) (*agents.Agent, error) {
	return agents.Load(filepath.Join(f.cfg.AgentsDir, name))
}

type fakeSchedules struct {
	active int
	next   time.Time
}

func (f fakeSchedules) Stats() (int, time.Time) { return f.active, f.next }

// The health report probes the default agent's server while none is
// built, then the built agents'; it serves its cache for HealthTTL and
// reads the schedules from the scheduler it was given.
func TestHealth_ProbesAndCaches(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"models":[{"name":"qwen3:1.7b"}]}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)
	cfg := testConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Sandbox.Mode = "trust"
	clock := time.Unix(1_800_000_000, 0)
	next := clock.Add(time.Hour)
	fake := &fakeAgents{cfg: cfg}
	h := NewHealth(HealthOptions{Config: cfg, Agents: fake, Schedules: fakeSchedules{2, next},
		Host: &hostfacts.Reader{ProcDir: t.TempDir(), SysDir: t.TempDir()}, Now: func() time.Time { return clock }})
	status := func(f httpapi.HealthFacts) map[string]httpapi.HealthCheck {
		out := map[string]httpapi.HealthCheck{}
		for _, c := range f.Checks {
			out[c.Name] = c
		}
		return out
	}

	got := h.Facts(context.Background())
	assert.Equal(t, 0, got.AgentsLoaded)
	checks := status(got)
	assert.Equal(t, "ok", checks["ollama "+srv.URL].Status, "the default agent's server: %+v", got.Checks)
	assert.Equal(t, "2 active, next at "+next.In(cfg.Scheduler.Location()).Format(time.DateTime)+" ("+cfg.Scheduler.Location().String()+")",
		checks["schedules"].Detail)
	assert.Equal(t, "warn", checks["sandbox"].Status, "trust mode")
	assert.Equal(t, "warn", checks["memory"].Status, "unreadable on the fake machine")
	assert.NotContains(t, checks, "temperature", "no sensor: no check")
	require.NotNil(t, got.Host)
	assert.Nil(t, got.Host.Memory)
	assert.Equal(t, int32(1), hits.Load())

	clock = clock.Add(HealthTTL - time.Second)
	h.Facts(context.Background())
	assert.Equal(t, int32(1), hits.Load(), "cached")

	// A built agent on a server of its own: that one is probed.
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	a, err := fake.Spec("assistant")
	require.NoError(t, err)
	a.Model.BaseURL = other.URL
	fake.loaded = []*agents.Agent{a}
	clock = clock.Add(time.Second)
	got = h.Facts(context.Background())
	assert.Equal(t, 1, got.AgentsLoaded)
	checks = status(got)
	assert.Equal(t, "fail", checks["ollama "+other.URL].Status)
	assert.NotContains(t, checks, "ollama "+srv.URL)
	assert.Equal(t, int32(1), hits.Load())
}

// An agent whose files do not load is left out of the probes, not an
// error of the report.
func TestHealth_UnloadableDefaultAgent(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Sandbox.Mode = "trust"
	h := NewHealth(HealthOptions{Config: cfg, Agents: brokenAgents{}, Schedules: fakeSchedules{},
		Host: &hostfacts.Reader{ProcDir: t.TempDir(), SysDir: t.TempDir()}})
	got := h.Facts(context.Background())
	for _, c := range got.Checks {
		assert.NotContains(t, c.Name, "ollama")
	}
	var names []string
	for _, c := range got.Checks {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"memory", "disk", "load", "schedules", "sandbox"}, names)
}

type brokenAgents struct{}

func (brokenAgents) LoadedCount() int             { return 0 }
func (brokenAgents) LoadedSpecs() []*agents.Agent { return nil }
func (brokenAgents) Spec(string) (*agents.Agent, error) {
	return nil, errors.New("agent.yaml:1: broken")
}
