package sched

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxToolArgs bounds the arguments the schedule tool reads.
const maxToolArgs = 64 << 10

// NewTool returns Agnx's schedule tool over s: create, list and cancel
// the calling agent's schedules. A schedule made in a gateway's chat posts
// there; one made in a session of the HTTP API or the CLI posts to that
// session (lite's extension: Agnx refuses those).
func NewTool(s *Service) runtime.Tool { return &scheduleTool{s: s} }

type scheduleTool struct{ s *Service }

var _ runtime.Tool = (*scheduleTool)(nil)

// scheduleArgs are the tool's arguments; null is absent, unknown keys are
// ignored, as in Agnx.
type scheduleArgs struct {
	Action          string  `json:"action"`
	At              *string `json:"at"`
	EverySeconds    *int64  `json:"every_seconds"`
	Cron            *string `json:"cron"`
	Message         *string `json:"message"`
	Task            *string `json:"task"`
	MaxRetries      *int    `json:"max_retries"`
	RetryDelayMS    *int64  `json:"retry_delay_ms"`
	MaxRetryDelayMS *int64  `json:"max_retry_delay_ms"`
	ProcessHandle   *string `json:"process_handle"`
	ScheduleID      *string `json:"schedule_id"`
	Missed          *string `json:"missed"`
}

const scheduleSchema = `{"type":"object","properties":{` +
	`"action":{"type":"string","enum":["create","list","cancel"],"description":"Action to perform"},` +
	`"at":{"type":"string","description":"(create) One-shot: ISO8601 timestamp for when to fire (e.g., '2026-01-30T16:00:00Z'). Fires once then auto-completes."},` +
	`"every_seconds":{"type":"integer","description":"(create) Recurring: Interval in seconds. Only use when user explicitly wants repetition."},` +
	`"cron":{"type":"string","description":"(create) Recurring: Cron expression (e.g., '0 9 * * MON-FRI'). Only use when user explicitly wants a recurring schedule."},` +
	`"message":{"type":"string","description":"(create) Simple message to deliver (no LLM call, just sends the text)"},` +
	`"task":{"type":"string","description":"(create) Task to execute with LLM and tools, then report results"},` +
	`"max_retries":{"type":"integer","description":"(create) Number of retry attempts on failure (default: 3)"},` +
	`"retry_delay_ms":{"type":"integer","description":"(create) Initial delay before first retry in milliseconds (default: 1000)"},` +
	`"max_retry_delay_ms":{"type":"integer","description":"(create) Maximum delay between retries in milliseconds (default: 30000)"},` +
	`"process_handle":{"type":"string","description":"(create) Link to a background process handle. The schedule is auto-cancelled when the process exits."},` +
	`"schedule_id":{"type":"string","description":"(cancel) The ID of the schedule to cancel"},` +
	`"missed":{"type":"string","enum":["run_once","skip"],"description":"(create) What to do with runs missed while the agent was down: 'run_once' (default) runs once, late; 'skip' skips them."}},` +
	`"required":["action"]}`

// Spec describes schedule to the model, in Agnx's words.
func (t *scheduleTool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "schedule",
		Description: "Manage scheduled tasks. Actions: 'create' a one-shot reminder or recurring task, 'list' active schedules, 'cancel' a schedule.",
		Schema:      []byte(scheduleSchema)}
}

func failedArgs(msg string) runtime.Result {
	return runtime.ErrorResult("Tool execution failed: failed to parse tool arguments: " + msg)
}

// Run creates, lists or cancels.
func (t *scheduleTool) Run(ctx context.Context, raw []byte) (runtime.Result, error) {
	if len(raw) > maxToolArgs {
		return failedArgs(fmt.Sprintf("the arguments are %d bytes, over %d", len(raw), maxToolArgs)), nil
	}
	var a scheduleArgs
	if err := json.Unmarshal(bytes.TrimSpace(raw), &a); err != nil {
		return failedArgs(err.Error()), nil
	}
	info, ok := runtime.CallFrom(ctx)
	if !ok || info.Agent == "" {
		return runtime.ErrorResult("Tool execution failed: no session context: schedules are made from an agent's turn"), nil
	}
	switch a.Action {
	case "create":
		return t.create(ctx, info, &a)
	case "list":
		return t.list(ctx, info.Agent)
	case "cancel":
		if a.ScheduleID == nil {
			return failedArgs("'schedule_id' is required for cancel action"), nil
		}
		return t.cancel(ctx, info.Agent, *a.ScheduleID)
	default:
		return runtime.ErrorResult(fmt.Sprintf("Unknown action: '%s'. Use: create, list, cancel", a.Action)), nil
	}
}

func (t *scheduleTool) create(ctx context.Context, info runtime.CallInfo, a *scheduleArgs) (runtime.Result, error) {
	switch count(a.At != nil, a.EverySeconds != nil, a.Cron != nil) {
	case 0:
		return runtime.ErrorResult("Error: Must specify one of: at, every_seconds, or cron"), nil
	case 1:
	default:
		return runtime.ErrorResult("Error: Can only specify one timing option (at, every_seconds, or cron)"), nil
	}
	if a.EverySeconds != nil && *a.EverySeconds < 1 {
		return runtime.ErrorResult("Error: every_seconds must be >= 1"), nil
	}
	if a.EverySeconds != nil && *a.EverySeconds < MinEverySeconds {
		return runtime.ErrorResult(fmt.Sprintf("Error: every_seconds must be >= %d (agnx-lite runs nothing more often, to spare a small machine)", MinEverySeconds)), nil
	}
	switch count(a.Message != nil, a.Task != nil) {
	case 0:
		return runtime.ErrorResult("Error: Must specify one of: message or task"), nil
	case 1:
	default:
		return runtime.ErrorResult("Error: Can only specify one payload option (message or task)"), nil
	}
	sc := Schedule{Agent: info.Agent, CreatedBySession: info.SessionID, Destination: Destination{SessionID: info.SessionID}}
	if info.Gateway != "" && info.ChatID != "" {
		sc.Destination = Destination{Gateway: info.Gateway, ChatID: info.ChatID}
	}
	switch {
	case a.At != nil:
		at, err := parseAt(*a.At, t.s.loc)
		if err != nil {
			return failedArgs(fmt.Sprintf("Invalid timestamp '%s': %v", *a.At, err)), nil
		}
		sc.Timing.At = &at
	case a.EverySeconds != nil:
		sc.Timing.EverySeconds = *a.EverySeconds
	default:
		sc.Timing.Cron = *a.Cron
	}
	if a.Message != nil {
		sc.Payload = Payload{Kind: KindMessage, Text: *a.Message}
	} else {
		sc.Payload = Payload{Kind: KindTask, Text: *a.Task}
	}
	if a.MaxRetries != nil || a.RetryDelayMS != nil || a.MaxRetryDelayMS != nil {
		sc.Retry = &Retry{MaxRetries: deref(a.MaxRetries, 3), InitialDelayMS: deref(a.RetryDelayMS, 1000), MaxDelayMS: deref(a.MaxRetryDelayMS, 30000)}
	}
	sc.ProcessHandle = deref(a.ProcessHandle, "")
	sc.Missed = deref(a.Missed, "")
	created, err := t.s.Create(ctx, sc)
	if err != nil {
		return runtime.ErrorResult("Failed to create schedule: " + err.Error()), nil
	}
	kind := "one-shot"
	if created.Recurring() {
		kind = "recurring"
	}
	return runtime.Result{Content: fmt.Sprintf("Created %s schedule: %s", kind, created.ID)}, nil
}

// parseAt reads an RFC 3339 time; one without a zone is read in loc.
func parseAt(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("give an RFC 3339 time such as 2026-01-30T16:00:00Z")
}

// scheduleSummary is one line of list's answer, as Agnx writes it.
type scheduleSummary struct {
	ID            string `json:"id"`
	Timing        string `json:"timing"`
	PayloadType   string `json:"payload_type"`
	CreatedAt     string `json:"created_at"`
	ProcessHandle string `json:"process_handle,omitempty"`
}

func (t *scheduleTool) list(ctx context.Context, agent string) (runtime.Result, error) {
	scs, err := t.s.List(ctx, agent, false)
	if err != nil {
		return runtime.Result{}, err
	}
	if len(scs) == 0 {
		return runtime.Result{Content: "No active schedules."}, nil
	}
	out := make([]scheduleSummary, len(scs))
	for i, sc := range scs {
		out[i] = scheduleSummary{ID: sc.ID, Timing: formatTiming(sc.Timing), PayloadType: sc.Payload.Kind,
			CreatedAt: sc.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), ProcessHandle: sc.ProcessHandle}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return runtime.Result{}, err
	}
	return runtime.Result{Content: "Active schedules:\n" + strings.TrimSuffix(b.String(), "\n")}, nil
}

// formatTiming says when a schedule runs, as Agnx's list does.
func formatTiming(t Timing) string {
	switch {
	case t.At != nil:
		return "at " + t.At.UTC().Format("2006-01-02 15:04 UTC")
	case t.EverySeconds >= 3600:
		return fmt.Sprintf("every %d hours", t.EverySeconds/3600)
	case t.EverySeconds >= 60:
		return fmt.Sprintf("every %d minutes", t.EverySeconds/60)
	case t.EverySeconds > 0:
		return fmt.Sprintf("every %d seconds", t.EverySeconds)
	default:
		return "cron: " + t.Cron
	}
}

func (t *scheduleTool) cancel(ctx context.Context, agent, id string) (runtime.Result, error) {
	if _, err := t.s.Cancel(ctx, id, agent); err != nil {
		if errors.Is(err, ErrNotFound) {
			return runtime.ErrorResult("Failed to cancel schedule: schedule not found: " + id), nil
		}
		return runtime.ErrorResult("Failed to cancel schedule: " + err.Error()), nil
	}
	return runtime.Result{Content: "Cancelled schedule: " + id}, nil
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
