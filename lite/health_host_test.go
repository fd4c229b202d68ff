package lite

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// GET /api/v1/health gives the host facts in its host object, and their
// checks beside doctor's others, from one reading of a (fake) Pi.
func TestHealth_Host(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := crashConfig(t.TempDir())
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Runtime.MemoryLimitMB = 0
	cfg.Sandbox.Mode = "trust"
	app, err := Open(cfg, &Options{NoSync: true, host: fakeHost(t, "50000\n")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, app.Close()) })
	api := httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app}, RSS: app.RSS, Health: doctor.NewHealth(app.healthOptions()).Facts})

	req := httptest.NewRequest("GET", "/api/v1/health", nil)
	req.RemoteAddr, req.Host = "127.0.0.1:1", "127.0.0.1:8080"
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got struct {
		Host   json.RawMessage
		Checks []httpapi.HealthCheck
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))

	var host httpapi.HostFacts
	require.NoError(t, json.Unmarshal(got.Host, &host))
	require.NotNil(t, host.Disk)
	assert.Positive(t, host.Disk.TotalBytes)
	host.Disk = nil // the test machine's
	temp := 61.835
	assert.Equal(t, httpapi.HostFacts{
		Memory:         &httpapi.HostMemory{TotalBytes: 933448 << 10, AvailableBytes: 611204 << 10},
		Load:           &httpapi.HostLoad{Load1: 0.52, Load5: 0.40, Load15: 3.25},
		CPUTemperature: &temp,
		Throttled:      &httpapi.HostThrottled{Now: []string{}, SinceBoot: []string{"under_voltage", "throttled"}},
	}, host)
	assert.Contains(t, string(got.Host), `"throttled":{"now":[],"since_boot":["under_voltage","throttled"]}`)

	status := map[string]string{}
	for _, c := range got.Checks {
		status[c.Name] = c.Status
	}
	for name, want := range map[string]string{"memory": "ok", "disk": "", "load": "ok", "temperature": "ok", "throttling": "warn"} {
		require.Contains(t, status, name)
		if want != "" {
			assert.Equal(t, want, status[name], name)
		}
	}
}
