package agnxcompat

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contract is one open daemon (no tokens: loopback only) with three
// agents: helper (bash under mode: ask), runner (bash under mode:
// dangerous) and broken (its model answers every call 400).
type contract struct {
	d     *daemon
	c     *apiClient
	fakes fakes
}

// TestContract runs the §6, §7 and §8 rows that need no tokens against
// one daemon; each subtest is named after its row.
func TestContract(t *testing.T) {
	f := newFakes(t)
	broken := parentAgent("broken", "Its model fails.", f.broken.BaseURL(), "dangerous")
	d := startDaemon(t, daemonSpec{agents: []agentDef{
		parentAgent("helper", "Contract helper.", f.echo.BaseURL(), "ask"),
		parentAgent("runner", "Runs tools unasked.", f.echo.BaseURL(), "dangerous"),
		broken,
	}})
	k := &contract{d: d, c: newAPIClient(d.base, ""), fakes: f}
	for _, row := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"§6_GET_livez_200_ok", k.livez},
		{"§6_GET_readyz_workspace_hash", k.readyz},
		{"§6_GET_version_fields", k.version},
		{"§6_GET_agents_list", k.listAgents},
		{"§6_GET_agent_detail", k.getAgent},
		{"§6_§8_GET_agent_unknown_404", k.getAgentUnknown},
		{"§6_POST_sessions_201_active", k.createSession},
		{"§6_§8_POST_sessions_unknown_agent_404", k.createSessionUnknownAgent},
		{"§6_GET_sessions_list", k.listSessions},
		{"§6_GET_session", k.getSession},
		{"§6_DELETE_session_204_then_404", k.deleteSession},
		{"§6_§8_unknown_session_404", k.unknownSession},
		{"§6_POST_messages_200", k.postMessages},
		{"§6_GET_messages_limit_first_N", k.getMessages},
		{"§7_POST_stream_start_tokens_done", k.streamPlain},
		{"§7_stream_extensions_do_not_leak_when_tools_run", k.streamToolsNoLeak},
		{"§6_POST_messages_approval_202_paused_then_approve", k.approvalViaMessages},
		{"§7_stream_approval_required_then_end", k.streamApprovalEnds},
		{"§7_CLI_hangup_after_approval_required_then_approve", k.cliHangUp},
		{"§6_approve_deny_turn_continues", k.approveDeny},
		{"§6_§8_approve_nothing_pending_404", k.approveNonePending},
		{"§6_§8_approve_wrong_call_id_400", k.approveWrongCallID},
		{"§8_500_LLM_error", k.llmError},
		{"§6_unknown_body_fields_ignored", k.unknownFields},
		{"§6_415_without_JSON_content_type", k.unsupportedMediaType},
		{"§6_400_malformed_JSON", k.malformed},
		{"§6_422_wrong_shape", k.wrongShape},
		{"§6_413_body_over_2MiB", k.tooLarge},
	} {
		t.Run(row.name, row.run)
	}
}

func (k *contract) livez(t *testing.T) {
	r, err := k.c.request("GET", "/livez", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, r.Status, "§6 livez: %s", r)
	assert.Equal(t, "ok", strings.TrimSpace(string(r.Body)), "§6 livez: 200 text ok")
}

func (k *contract) readyz(t *testing.T) {
	v, err := k.c.health()
	require.NoError(t, err, "§6 readyz: the parent's health() fails")
	assert.Equal(t, "ok", *v.Status, "§6 readyz status")
	assert.Equal(t, workspaceHash(t, k.d.workspace), v.WorkspaceHash,
		"§6 readyz: workspace_hash is sha256 hex of the canonical workspace path (the CLI compares it to find its server)")
}

func (k *contract) version(t *testing.T) {
	var v struct {
		Version   *string `json:"version" agnx:"req"`
		Commit    *string `json:"commit" agnx:"req"`
		BuildDate *string `json:"build_date" agnx:"req"`
		Variant   *string `json:"variant" agnx:"req"`
	}
	r, err := k.c.request("GET", "/version", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "§6 version: %s", r)
	require.NoError(t, decodeStrict(r.Body, &v), "§6 version: {version, commit, build_date, variant}: %s", r)
	assert.Contains(t, []string{"core", "full"}, *v.Variant, "§6 version: variant is core or full")
}

func (k *contract) listAgents(t *testing.T) {
	list, err := k.c.listAgents()
	require.NoError(t, err, "§6 GET /api/v1/agents: the parent's list_agents fails")
	byName := map[string]agentSummary{}
	for _, a := range list {
		byName[*a.Name] = a
	}
	require.Contains(t, byName, "helper", "§6 agents: loaded agents by metadata.name")
	require.Contains(t, byName, "runner")
	h := byName["helper"]
	if assert.NotNil(t, h.Description, "§6 agents: description") {
		assert.Equal(t, "Contract helper.", *h.Description)
	}
	if assert.NotNil(t, h.Version, "§6 agents: version") {
		assert.Equal(t, "1.2", *h.Version)
	}
}

func (k *contract) getAgent(t *testing.T) {
	a, err := k.c.getAgent("helper")
	require.NoError(t, err, "§6 GET /api/v1/agents/{name}: the parent's get_agent fails")
	assert.Equal(t, "duragent/v1alpha1", *a.APIVersion, "§6 agent: api_version")
	assert.Equal(t, "Agent", *a.Kind, "§6 agent: kind")
	assert.Equal(t, "helper", *a.Metadata.Name)
	if assert.NotNil(t, a.Metadata.Description) {
		assert.Equal(t, "Contract helper.", *a.Metadata.Description)
	}
	if assert.NotNil(t, a.Metadata.Version) {
		assert.Equal(t, "1.2", *a.Metadata.Version)
	}
	assert.Equal(t, map[string]string{"team": "compat"}, a.Metadata.Labels, "§6 agent: metadata.labels")
	m := a.Spec.Model
	assert.Equal(t, "openai", *m.Provider, "§6 agent: spec.model.provider")
	assert.Equal(t, "gpt-compat", *m.Name, "§6 agent: spec.model.name")
	if assert.NotNil(t, m.Temperature, "§6 agent: spec.model.temperature as configured") {
		assert.InDelta(t, 0.5, *m.Temperature, 1e-6)
	}
	if assert.NotNil(t, m.BaseURL, "§6 agent: spec.model.base_url as configured") {
		assert.Equal(t, k.fakes.echo.BaseURL(), *m.BaseURL)
	}
	assert.Nil(t, m.MaxOutputTokens, "§6 agent: configured values only (max_output_tokens is not set)")
	assert.Nil(t, m.MaxInputTokens, "§6 agent: configured values only (max_input_tokens is not set)")
	if assert.NotNil(t, a.Spec.SystemPrompt, "§6 agent: spec.system_prompt is the prompt text") {
		assert.Equal(t, helperSystemPrompt, strings.TrimSpace(*a.Spec.SystemPrompt), "§6 agent: prompt texts, not paths")
	}
	if assert.NotNil(t, a.Spec.Instructions, "§6 agent: spec.instructions is the prompt text") {
		assert.Equal(t, helperInstructions, strings.TrimSpace(*a.Spec.Instructions), "§6 agent: prompt texts, not paths")
	}
}

func (k *contract) getAgentUnknown(t *testing.T) {
	r, err := k.c.request("GET", "/api/v1/agents/nobody", nil)
	require.NoError(t, err)
	assertProblem(t, r, 404, problemNotFound, "Not Found", "unknown agent")
}

// session creates a session of agent, failing the test if it cannot.
func (k *contract) session(t *testing.T, agent string) string {
	t.Helper()
	s, r, err := k.c.createSession(agent)
	require.NoError(t, err, "§6 POST /api/v1/sessions: %s", r)
	return *s.SessionID
}

func (k *contract) createSession(t *testing.T) {
	s, r, err := k.c.createSession("helper")
	require.NoError(t, err, "§6 POST /api/v1/sessions: the parent's create_session fails: %s", r)
	assert.Equal(t, http.StatusCreated, r.Status, "§6 POST sessions answers 201")
	assert.True(t, strings.HasPrefix(*s.SessionID, "session_"), "§6: ids are session_<ULID>; got %q", *s.SessionID)
	assert.Equal(t, "helper", *s.Agent)
	assert.Equal(t, sessionStatus("active"), *s.Status, "§6 POST sessions: status active")
	assertRFC3339(t, *s.CreatedAt, "created_at")
}

func (k *contract) createSessionUnknownAgent(t *testing.T) {
	r, err := k.c.request("POST", "/api/v1/sessions", createSessionRequest{Agent: "nobody"})
	require.NoError(t, err)
	assertProblem(t, r, 404, problemNotFound, "Not Found", "session for an unknown agent")
}

func (k *contract) listSessions(t *testing.T) {
	id := k.session(t, "helper")
	list, err := k.c.listSessions()
	require.NoError(t, err, "§6 GET /api/v1/sessions: the parent's list_sessions fails")
	var found bool
	for _, s := range list {
		assertRFC3339(t, *s.CreatedAt, "created_at")
		if *s.SessionID == id {
			found = true
			assert.Equal(t, "helper", *s.Agent)
			assert.Equal(t, sessionStatus("active"), *s.Status)
		}
	}
	assert.True(t, found, "§6 GET sessions lists the session just created")
}

func (k *contract) getSession(t *testing.T) {
	id := k.session(t, "helper")
	s, err := k.c.getSession(id)
	require.NoError(t, err, "§6 GET /api/v1/sessions/{id}: the parent's get_session fails")
	assert.Equal(t, id, *s.SessionID)
	assert.Equal(t, "helper", *s.Agent)
	assert.Equal(t, sessionStatus("active"), *s.Status)
	assertRFC3339(t, *s.CreatedAt, "created_at")
	if assert.NotNil(t, s.UpdatedAt, "§6 GET session: updated_at") {
		assertRFC3339(t, *s.UpdatedAt, "updated_at")
	}
}

func (k *contract) deleteSession(t *testing.T) {
	id := k.session(t, "helper")
	r, err := k.c.request("DELETE", "/api/v1/sessions/"+id, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, r.Status, "§6 DELETE session: 204; got %s", r)
	assert.Empty(t, string(r.Body), "§6 DELETE session: empty body")
	r, err = k.c.request("GET", "/api/v1/sessions/"+id, nil)
	require.NoError(t, err)
	assertProblem(t, r, 404, problemNotFound, "Not Found", "GET a deleted session")
}

// decodeAs decodes a 2xx body strictly into T, failing the test.
func decodeAs[T any](t *testing.T, r httpResult, row string) T {
	t.Helper()
	var v T
	require.NoError(t, decodeStrict(r.Body, &v), "%s: %s", row, r)
	return v
}

// jsonText is a compact JSON string for assertion messages.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
