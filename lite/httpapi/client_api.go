package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
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

// Reply is the answer to a synchronous message or to an approval.
type Reply struct {
	// MessageID names the turn's final assistant message (msg_<ULID>).
	MessageID string
	Content   string
	// Status is how the turn ended (runtime.TurnCompleted, ...), or
	// StatusPendingApproval when it waits for a decision on Approval.
	Status    string
	ToolCalls []runtime.ToolCall
	Usage     runtime.Usage
	Seq       uint64 // the turn_end's seq
	// Approval is the call the turn waits for a decision on (POST
	// .../approve answers it), when Status is StatusPendingApproval.
	Approval *PendingCall
}

// StatusPendingApproval is a Reply's Status when its turn waits for a
// decision on a tool call.
const StatusPendingApproval = "pending_approval"

// PendingCall is a tool call waiting for a decision.
type PendingCall struct {
	CallID, Command, ToolName string
}

// replyJSON is the body of POST .../messages and .../approve, 200 or 202.
type replyJSON struct {
	MessageID  string         `json:"message_id"`
	Content    string         `json:"content"`
	Status     string         `json:"status"`
	TurnStatus string         `json:"turn_status"`
	ToolCalls  []toolCallJSON `json:"tool_calls"`
	Usage      usageJSON      `json:"usage"`
	Seq        uint64         `json:"seq"`
	CallID     string         `json:"call_id"`
	Command    string         `json:"command"`
	ToolName   string         `json:"tool_name"`
}

func (j *replyJSON) reply() Reply {
	r := Reply{MessageID: j.MessageID, Content: j.Content, Status: j.Status, Seq: j.Seq,
		Usage: runtime.Usage{PromptTokens: j.Usage.Prompt, CompletionTokens: j.Usage.Completion}}
	if j.TurnStatus != "" {
		r.Status = j.TurnStatus
	}
	for _, tc := range j.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, runtime.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	if j.CallID != "" {
		r.Status, r.Approval = StatusPendingApproval, &PendingCall{CallID: j.CallID, Command: j.Command, ToolName: j.ToolName}
	}
	return r
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
	// RSSBytes is the daemon's own resident memory; its MCP servers'
	// are theirs, in MCPServers.
	RSSBytes   int64       `json:"rss_bytes,omitempty"`
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// SchedulesActive is how many schedules are active, SchedulesNext
	// when the next one runs (zero: none).
	SchedulesActive int       `json:"schedules_active,omitempty"`
	SchedulesNext   time.Time `json:"schedules_next,omitzero"`
}

// MCPServer is one MCP server as the status reports it.
type MCPServer struct {
	Agent  string `json:"agent"`
	Server string `json:"server"`
	// State is running or stopped (started on its next call).
	State     string `json:"state"`
	PID       int    `json:"pid,omitempty"`
	RSSBytes  int64  `json:"rss_bytes"`
	Tools     int    `json:"tools"`
	Calls     uint64 `json:"calls"`
	Failures  uint64 `json:"failures"`
	Restarts  uint64 `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
}

func sessionPath(id string) string { return "/api/v1/sessions/" + url.PathEscape(id) }

func (j *sessionJSON) info() runtime.SessionInfo {
	return runtime.SessionInfo{ID: j.ID, Agent: j.Agent, Gateway: j.Gateway, ChatID: j.ChatID, Status: runtime.SessionStatus(j.Status),
		Created: j.CreatedAt, Updated: j.UpdatedAt, Turns: j.Turns, LastSeq: j.LastSeq, Preview: j.Preview,
		Usage: runtime.Usage{PromptTokens: j.Usage.Prompt, CompletionTokens: j.Usage.Completion}, Parent: j.ParentID,
		Principal: principal(j.Principal)}
}

// principal reads a session's principal as the daemon wrote it; none when
// it wrote none (an older daemon) or one this client cannot read.
func principal(s string) agents.Principal {
	p, err := agents.ParsePrincipal(s)
	if err != nil {
		return agents.Principal{}
	}
	return p
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

// SearchMemory searches an agent's memory (GET .../memory/search, a lite
// extension); limit 0 is the server's default.
func (c *Client) SearchMemory(ctx context.Context, agent, q string, limit int) (MemoryResults, error) {
	v := url.Values{"q": {q}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var res MemoryResults
	err := c.call(ctx, request{method: "GET", path: "/api/v1/agents/" + url.PathEscape(agent) + "/memory/search?" + v.Encode()}, &res, false)
	return res, err
}

// Send sends a message and waits for its turn to end (POST .../messages),
// or to wait for a decision on a tool call (Status StatusPendingApproval:
// Approve answers it). A turn that fails, or that used all its agent's
// tool rounds, is a *ProblemError saying why.
func (c *Client) Send(ctx context.Context, id, content string) (Reply, error) {
	var j replyJSON
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/messages", body: c.message(content)}, &j, true)
	return j.reply(), err
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

// Approve answers a pending approval (decision is allow_once,
// allow_always or deny) and waits, as Send does, for the turn to end or to
// wait for another decision.
func (c *Client) Approve(ctx context.Context, id, callID, decision string) (Reply, error) {
	var j replyJSON
	body := map[string]string{"call_id": callID, "decision": decision}
	err := c.call(ctx, request{method: "POST", path: sessionPath(id) + "/approve", body: body}, &j, true)
	return j.reply(), err
}

// Answer answers a pending approval like Approve, but returns once the
// decision is stored (?wait=false): for a client that reads the turn's
// stream, where the rest shows.
func (c *Client) Answer(ctx context.Context, id, callID, decision string) error {
	body := map[string]string{"call_id": callID, "decision": decision}
	return c.call(ctx, request{method: "POST", path: sessionPath(id) + "/approve?wait=false", body: body}, nil, false)
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
	if err := sc.Err(); err != nil {
		return err
	}
	if msg := resp.Trailer.Get(exportErrorTrailer); msg != "" {
		return fmt.Errorf("export of session %s is incomplete: %s", id, msg)
	}
	return nil
}
