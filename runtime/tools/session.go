package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// SessionStore is what the session tool reads: the sessions' records and
// their events (lite reads them from the database).
type SessionStore interface {
	Sessions() ([]runtime.SessionInfo, error)
	Events(sessionID string, after uint64, fn func(runtime.Event) error) error
}

// Session is Agnx's session tool: list the agent's other live sessions,
// or read the last messages of one of them. Only sessions of the calling
// agent are seen, and of those only what the call's runtime.Viewer sees:
// by default the sessions of the same principal (the same person or
// chat) and the caller's own subagents, where Agnx shows every session of
// the agent to every caller. Action info (a lite extension, also what a
// call without an action does) tells about the conversation the call is
// in.
type Session struct {
	Store SessionStore
	// Now is the clock; default time.Now.
	Now func() time.Time
}

var _ runtime.Tool = Session{}

type sessionArgs struct {
	Action    string `json:"action"`
	SessionID string `json:"session_id"`
	Limit     *int   `json:"limit"`
}

// Limits of the session tool, as Agnx's.
const (
	maxSiblings       = 10
	maxSessionMessage = 500  // bytes of one message shown
	sessionScanEvents = 4000 // events read back to find the last messages
)

// Spec describes session to the model.
func (Session) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "session",
		Description: "Peek into other sessions of the same agent. Use 'list' to see sibling sessions, 'read' to view " +
			"their messages. Useful for recalling context from conversations on other channels. 'info' tells about this one.",
		Schema: []byte(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["list","read","info"],"description":"Action: 'list' other sessions, or 'read' messages from one."},` +
			`"session_id":{"type":"string","description":"Target session ID for 'read' action."},` +
			`"limit":{"type":"integer","description":"Max messages to return for 'read' (default 20, max 50)."}},` +
			`"required":["action"]}`)}
}

// Run lists, reads or reports.
func (t Session) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	var a sessionArgs
	if err := decodeArgs(raw, &a); err != nil {
		return runtime.ErrorResult("Tool execution failed: " + err.Error()), nil
	}
	info, ok := runtime.CallFrom(ctx)
	if !ok {
		return runtime.ErrorResult("error: session: no session information is available"), nil
	}
	var (
		out string
		err error
	)
	switch a.Action {
	case "", "info":
		return runtime.Result{Content: t.info(info)}, nil
	case "list":
		out, err = t.list(info)
	case "read":
		if a.SessionID == "" {
			return runtime.ErrorResult("error: session: 'session_id' is required for read action"), nil
		}
		limit := 20
		if a.Limit != nil {
			limit = min(max(*a.Limit, 1), 50)
		}
		out, err = t.read(info, a.SessionID, limit)
	default:
		return runtime.ErrorResult(fmt.Sprintf("error: session: unknown action %q: use list or read", a.Action)), nil
	}
	if err != nil {
		return runtime.ErrorResult("error: session: " + err.Error()), nil
	}
	return runtime.Result{Content: out}, nil
}

func (t Session) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t Session) info(info runtime.CallInfo) string {
	return fmt.Sprintf("session: %s\nagent: %s\nstarted: %s\nturns so far: %d\nevents: %d\ntokens: %d in, %d out\nnow: %s",
		info.SessionID, info.Agent, info.Created.Local().Format(time.RFC1123), info.Turns, info.Events,
		info.Usage.PromptTokens, info.Usage.CompletionTokens, t.now().Format(time.RFC1123))
}

var errNoStore = errors.New("other sessions cannot be read here: ask in a session the daemon runs")

// list is the agent's other sessions that have not ended, the 10 most
// recently active.
func (t Session) list(info runtime.CallInfo) (string, error) {
	if t.Store == nil {
		return "", errNoStore
	}
	all, err := t.Store.Sessions()
	if err != nil {
		return "", err
	}
	lookup := refs(all)
	var sib []runtime.SessionInfo
	for _, s := range all {
		if s.ID != info.SessionID && s.Status != runtime.SessionCompleted && info.Viewer.Sees(s.Ref(), lookup) {
			sib = append(sib, s)
		}
	}
	if len(sib) == 0 {
		return fmt.Sprintf("No other active sessions for agent '%s'.", info.Agent), nil
	}
	// Newest activity first.
	for i := 1; i < len(sib); i++ {
		for j := i; j > 0 && sib[j].Updated.After(sib[j-1].Updated); j-- {
			sib[j], sib[j-1] = sib[j-1], sib[j]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Other sessions for agent '%s':\n", info.Agent)
	now := t.now()
	for _, s := range sib[:min(len(sib), maxSiblings)] {
		gw := s.Gateway
		if gw == "" {
			gw = "unknown"
		}
		fmt.Fprintf(&b, "- %s (%s) — %s — %s\n", s.ID, gw, s.Status, ago(now.Sub(s.Updated)))
	}
	return b.String(), nil
}

// ago is a duration as Agnx words it: just now, 5m ago, 3h ago, 2d ago.
func ago(d time.Duration) string {
	switch m := int(d.Minutes()); {
	case m < 1:
		return "just now"
	case m < 60:
		return fmt.Sprintf("%dm ago", m)
	case m < 1440:
		return fmt.Sprintf("%dh ago", m/60)
	default:
		return fmt.Sprintf("%dd ago", m/1440)
	}
}

// read is the last limit user and assistant messages of a session of the
// same agent, "[role]: text", each cut at 500 bytes.
func (t Session) read(info runtime.CallInfo, id string, limit int) (string, error) {
	if t.Store == nil {
		return "", errNoStore
	}
	all, err := t.Store.Sessions()
	if err != nil {
		return "", err
	}
	var target *runtime.SessionInfo
	for i := range all {
		if all[i].ID == id {
			target = &all[i]
		}
	}
	if target == nil {
		return "", fmt.Errorf("session '%s' not found: list the sessions to get an id", id)
	}
	if target.Agent != info.Agent {
		return "", errors.New("cannot peek into sessions of a different agent")
	}
	if !info.Viewer.Sees(target.Ref(), refs(all)) {
		return "", fmt.Errorf("session '%s' is another person's conversation, which this one may not read "+
			"(the sessions key of the agent's policy.yaml decides): list the sessions to see the ones it may", id)
	}
	after := uint64(0)
	if target.LastSeq > sessionScanEvents {
		after = target.LastSeq - sessionScanEvents
	}
	var msgs []string
	err = t.Store.Events(id, after, func(e runtime.Event) error {
		role := ""
		switch e.Type {
		case runtime.EvUserMessage:
			role = "user"
		case runtime.EvAssistant:
			role = "assistant"
		case runtime.EvToolCall, runtime.EvToolResult, runtime.EvToolProgress, runtime.EvToken,
			runtime.EvApprovalRequired, runtime.EvApprovalDecision, runtime.EvError,
			runtime.EvSessionStart, runtime.EvTurnEnd, runtime.EvSessionEnd,
			runtime.EvSilentMessage, runtime.EvHistoryCompaction:
			// Tool calls and results, approvals, errors, turn markers, group
			// chatter kept out of the conversation, compactions: not messages.
			fallthrough
		default:
			return nil
		}
		if e.Content == "" {
			return nil
		}
		text := e.Content
		if len(text) > maxSessionMessage {
			text = strings.ToValidUTF8(text[:maxSessionMessage], "") + "..."
		}
		msgs = append(msgs, "["+role+"]: "+text+"\n")
		if len(msgs) > limit {
			msgs = msgs[1:]
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(msgs) == 0 {
		return fmt.Sprintf("Session '%s' has no messages yet.", id), nil
	}
	return strings.Join(msgs, ""), nil
}

// refs is a lookup of sessions by id, for Viewer.Sees.
func refs(all []runtime.SessionInfo) func(string) (runtime.SessionRef, bool) {
	byID := make(map[string]runtime.SessionRef, len(all))
	for i := range all {
		byID[all[i].ID] = all[i].Ref()
	}
	return func(id string) (runtime.SessionRef, bool) {
		r, ok := byID[id]
		return r, ok
	}
}
