package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/valyala/fastjson"
)

// Agent is one agent as GET /api/v1/agents/{name} describes it, in
// Agnx's shape: what agent.yaml sets, nothing filled in.
type Agent struct {
	APIVersion string        `json:"api_version"`
	Kind       string        `json:"kind"`
	Metadata   AgentMetadata `json:"metadata"`
	Spec       AgentSpec     `json:"spec"`
}

// AgentMetadata is an agent's metadata.
type AgentMetadata struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	Labels      map[string]string `json:"labels"`
}

// AgentSpec is what an agent is: its model, its prompt texts and (a lite
// extension) its tools as type:name.
type AgentSpec struct {
	Model        AgentModel `json:"model"`
	SystemPrompt string     `json:"system_prompt"`
	Instructions string     `json:"instructions"`
	Soul         string     `json:"soul"`
	Tools        []string   `json:"tools"`
}

// AgentModel is an agent's model; Temperature is nil when agent.yaml sets
// none, the token limits 0.
type AgentModel struct {
	Provider        string   `json:"provider"`
	Name            string   `json:"name"`
	Temperature     *float64 `json:"temperature"`
	BaseURL         string   `json:"base_url"`
	MaxInputTokens  int      `json:"max_input_tokens"`
	MaxOutputTokens int      `json:"max_output_tokens"`
}

// Reply is the answer to a synchronous message.
type Reply struct {
	Content   string
	Status    string // how the turn ended: runtime.TurnCompleted, ...
	ToolCalls []runtime.ToolCall
	Usage     runtime.Usage
	Seq       uint64 // the turn_end's seq
}

// Status is what GET /api/admin/v1/status reports.
type Status struct {
	PID              int    `json:"pid"`
	Version          string `json:"version"`
	Address          string `json:"address"`
	UptimeSeconds    int64  `json:"uptime_seconds"`
	SessionsResident int    `json:"sessions_resident"`
	TurnsRunning     int    `json:"turns_running"`
	TurnsWaiting     int    `json:"turns_waiting"`
	Inbox            int    `json:"inbox"`
	Goroutines       int    `json:"goroutines"`
	HeapBytes        uint64 `json:"heap_bytes"`
	// Gateways is each gateway plugin's state, by name.
	Gateways map[string]string `json:"gateways,omitempty"`
}

func sessionPath(id string) string { return "/api/v1/sessions/" + url.PathEscape(id) }

func (j *sessionJSON) info() runtime.SessionInfo {
	return runtime.SessionInfo{ID: j.ID, Agent: j.Agent, Gateway: j.Gateway, ChatID: j.ChatID, Status: runtime.SessionStatus(j.Status),
		Created: j.CreatedAt, Updated: j.UpdatedAt, Turns: j.Turns, LastSeq: j.LastSeq, Preview: j.Preview,
		Usage: runtime.Usage{PromptTokens: j.Usage.Prompt, CompletionTokens: j.Usage.Completion}}
}

// Ready reports whether the daemon is ready (GET /readyz).
func (c *Client) Ready(ctx context.Context) error {
	return c.call(ctx, request{method: "GET", path: "/readyz"}, nil, false)
}

// WorkspaceHash returns the workspace_hash the daemon's /readyz reports:
// WorkspaceHash of the data dir it serves. A daemon not ready is an error.
func (c *Client) WorkspaceHash(ctx context.Context) (string, error) {
	var j struct {
		WorkspaceHash string `json:"workspace_hash"`
	}
	err := c.call(ctx, request{method: "GET", path: "/readyz"}, &j, false)
	return j.WorkspaceHash, err
}

// Live reports whether the daemon's HTTP server answers (GET /livez).
func (c *Client) Live(ctx context.Context) error {
	return c.call(ctx, request{method: "GET", path: "/livez"}, nil, false)
}

// CreateSession starts a session with agent, for Options.Gateway.
func (c *Client) CreateSession(ctx context.Context, agent string) (runtime.SessionInfo, error) {
	body := map[string]string{"agent": agent}
	if c.o.Gateway != "" {
		body["gateway"] = c.o.Gateway
	}
	var j sessionJSON
	err := c.call(ctx, request{method: "POST", path: "/api/v1/sessions", body: body}, &j, false)
	return j.info(), err
}

// Session reads one session.
func (c *Client) Session(ctx context.Context, id string) (runtime.SessionInfo, error) {
	var j sessionJSON
	err := c.call(ctx, request{method: "GET", path: sessionPath(id)}, &j, false)
	return j.info(), err
}

// Sessions lists the sessions, most recently updated first.
func (c *Client) Sessions(ctx context.Context) ([]runtime.SessionInfo, error) {
	var j struct {
		Sessions []sessionJSON `json:"sessions"`
	}
	if err := c.call(ctx, request{method: "GET", path: "/api/v1/sessions"}, &j, false); err != nil {
		return nil, err
	}
	out := make([]runtime.SessionInfo, len(j.Sessions))
	for i := range j.Sessions {
		out[i] = j.Sessions[i].info()
	}
	return out, nil
}

// Agent describes one agent.
func (c *Client) Agent(ctx context.Context, name string) (Agent, error) {
	var a Agent
	err := c.call(ctx, request{method: "GET", path: "/api/v1/agents/" + url.PathEscape(name)}, &a, false)
	return a, err
}

// Send sends a message and waits for its turn to end (POST .../messages).
// A turn that fails is a *ProblemError (provider_error) saying why.
func (c *Client) Send(ctx context.Context, id, content string) (Reply, error) {
	var j struct {
		Content   string         `json:"content"`
		Status    string         `json:"status"`
		ToolCalls []toolCallJSON `json:"tool_calls"`
		Usage     usageJSON      `json:"usage"`
		Seq       uint64         `json:"seq"`
	}
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/messages", body: c.message(content)}, &j, true)
	r := Reply{Content: j.Content, Status: j.Status, Seq: j.Seq,
		Usage: runtime.Usage{PromptTokens: j.Usage.Prompt, CompletionTokens: j.Usage.Completion}}
	for _, tc := range j.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, runtime.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return r, err
}

func (c *Client) message(content string) messageBody {
	return messageBody{Content: content, SenderID: c.o.SenderID}
}

// Cancel stops the session's running turn; it reports whether one ran.
func (c *Client) Cancel(ctx context.Context, id string) (bool, error) {
	var j struct {
		Cancelled bool `json:"cancelled"`
	}
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/cancel"}, &j, false)
	return j.Cancelled, err
}

// Approve answers a pending approval: decision is allow_once,
// allow_always or deny.
func (c *Client) Approve(ctx context.Context, id, callID, decision string) error {
	body := map[string]string{"call_id": callID, "decision": decision}
	return c.call(ctx, request{method: "POST", path: sessionPath(id) + "/approve", body: body}, nil, false)
}

// Status reads the daemon's status (admin).
func (c *Client) Status(ctx context.Context) (Status, error) {
	var s Status
	err := c.call(ctx, request{method: "GET", path: "/api/admin/v1/status", admin: true}, &s, false)
	return s, err
}

// Shutdown asks the daemon to stop (admin). It returns once the daemon
// accepted, or said it was stopping already; the daemon then drains its
// turns and exits.
func (c *Client) Shutdown(ctx context.Context) error {
	err := c.call(ctx, request{method: "POST", path: "/api/admin/v1/shutdown", admin: true, accept: "text/plain"}, nil, false)
	var pe *ProblemError
	if errors.As(err, &pe) && pe.Status == http.StatusConflict {
		return nil
	}
	return err
}

// ReloadAgents re-reads the loaded agents now (admin); an agent whose
// files are invalid is reported with Err set to its file:line error. It
// asks for the JSON report (Accept: application/json) where Agnx's
// clients get the text "Reloaded N agents".
func (c *Client) ReloadAgents(ctx context.Context) ([]AgentInfo, error) {
	var j struct {
		Agents []AgentInfo `json:"agents"`
	}
	err := c.call(ctx, request{method: "POST", path: "/api/admin/v1/reload-agents", admin: true}, &j, false)
	return j.Agents, err
}

// DeleteSession removes a session and its log.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.call(ctx, request{method: "DELETE", path: sessionPath(id)}, nil, false)
}

// Export calls fn with each stored event of the session, in order.
func (c *Client) Export(ctx context.Context, id string, fn func(runtime.Event) error) error {
	resp, err := c.open(ctx, request{method: "GET", path: sessionPath(id) + "/export", accept: "application/x-ndjson"})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var p fastjson.Parser
	for sc.Scan() {
		e, err := runtime.DecodeEvent(&p, sc.Bytes())
		if err != nil {
			return fmt.Errorf("export of session %s: %w", id, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return sc.Err()
}
