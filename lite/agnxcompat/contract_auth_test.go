package agnxcompat

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	apiToken   = "api-tok-3141"
	adminToken = "admin-tok-2718"
)

// TestContractAuth runs the §6 auth and admin rows against a daemon with
// api_token and admin_token; shutdown comes last and stops it.
func TestContractAuth(t *testing.T) {
	f := newFakes(t)
	d := startDaemon(t, daemonSpec{apiToken: apiToken, adminToken: adminToken, agents: []agentDef{
		parentAgent("helper", "Contract helper.", f.echo.BaseURL(), "ask"),
		parentAgent("runner", "Runs tools unasked.", f.echo.BaseURL(), "dangerous"),
	}})
	anon, api, admin := newAPIClient(d.base, ""), newAPIClient(d.base, apiToken), newAPIClient(d.base, adminToken)
	wrong := newAPIClient(d.base, "not-the-token")

	t.Run("§6_api_without_bearer_401_empty", func(t *testing.T) {
		for _, c := range []*apiClient{anon, wrong, admin} {
			r, err := c.request("GET", "/api/v1/agents", nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusUnauthorized, r.Status, "§6 auth: /api/v1/* without the api_token bearer ⇒ 401; got %s", r)
			assert.Empty(t, string(r.Body), "§6 auth: the 401 body is empty")
		}
		r, err := anon.request("POST", "/api/v1/sessions", createSessionRequest{Agent: "helper"})
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, r.Status, "§6 auth: POST too; got %s", r)
	})
	t.Run("§6_api_with_bearer_200", func(t *testing.T) {
		list, err := api.listAgents()
		require.NoError(t, err, "§6 auth: Authorization: Bearer <api_token> is accepted")
		assert.NotEmpty(t, list)
		_, r, err := api.createSession("helper")
		require.NoError(t, err, "§6: %s", r)
	})
	t.Run("§6_public_routes_need_no_bearer", func(t *testing.T) {
		for _, path := range []string{"/livez", "/readyz", "/version"} {
			r, err := anon.request("GET", path, nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, r.Status, "§6: %s is public; got %s", path, r)
		}
	})
	t.Run("§6_admin_without_admin_token_403", func(t *testing.T) {
		for _, c := range []*apiClient{anon, api, wrong} {
			_, r, err := c.admin("reload-agents")
			require.Error(t, err)
			assert.Equal(t, http.StatusForbidden, r.Status, "§6 admin auth: failure ⇒ 403; got %s", r)
			assert.Contains(t, string(r.Body), "Admin access denied", "§6 admin auth: 403 `Admin access denied`")
		}
	})
	t.Run("§6_admin_reload_agents", func(t *testing.T) {
		text, r, err := admin.admin("reload-agents")
		require.NoError(t, err, "§6 reload-agents: %s", r)
		m := regexp.MustCompile(`^Reloaded (\d+) agents$`).FindStringSubmatch(text)
		require.NotNil(t, m, "§6 reload-agents: 200 text `Reloaded N agents`; got %q", text)
		list, err := api.listAgents()
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(len(list)), m[1], "§6 reload-agents: N is the loaded agents")
	})
	t.Run("§6_admin_shutdown", func(t *testing.T) {
		text, r, err := admin.admin("shutdown")
		require.NoError(t, err, "§6 shutdown: %s", r)
		assert.Equal(t, "Shutdown initiated", text, "§6 shutdown: 200 text `Shutdown initiated`")
		assert.True(t, d.waitExit(), "§6 shutdown: the daemon exits")
	})
}
