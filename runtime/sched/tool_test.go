package sched

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// call runs the tool as agent's call in a Telegram chat (or, with no
// chat, an HTTP session).
func call(t *testing.T, tool runtime.Tool, agent, chat, args string) runtime.Result {
	t.Helper()
	info := runtime.CallInfo{SessionID: "s_" + agent, Agent: agent}
	if chat != "" {
		info.Gateway, info.ChatID = "telegram", chat
	}
	res, err := tool.Run(runtime.WithCall(context.Background(), info), []byte(args))
	require.NoError(t, err)
	return res
}

func TestTool_Create(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mustZone(t, "Europe/Berlin"))
		tool := NewTool(h.s)
		assert.Equal(t, "schedule", tool.Spec().Name)

		res := call(t, tool, "a", "42", `{"action":"create","at":"2000-01-01T12:00:00Z","message":"tea"}`)
		require.False(t, res.IsError, res.Content)
		id, ok := strings.CutPrefix(res.Content, "Created one-shot schedule: sched_")
		require.True(t, ok, res.Content)
		sc, _ := h.get(IDPrefix + id)
		assert.Equal(t, Destination{Gateway: "telegram", ChatID: "42"}, sc.Destination)
		assert.Equal(t, "s_a", sc.CreatedBySession)
		assert.Equal(t, Payload{Kind: KindMessage, Text: "tea"}, sc.Payload)
		assert.Nil(t, sc.Retry)

		// A time without a zone is read in the schedule's (Berlin: UTC+1).
		res = call(t, tool, "a", "", `{"action":"create","at":"2000-01-01T12:00:00","task":"sum up","max_retries":2,"missed":"skip"}`)
		require.False(t, res.IsError, res.Content)
		sc, _ = h.get(strings.TrimPrefix(res.Content, "Created one-shot schedule: "))
		assert.True(t, sc.Timing.At.Equal(time.Date(2000, 1, 1, 11, 0, 0, 0, time.UTC)), "%v", sc.Timing.At)
		assert.Equal(t, Destination{SessionID: "s_a"}, sc.Destination, "an HTTP session gets its schedules too")
		assert.Equal(t, &Retry{MaxRetries: 2, InitialDelayMS: 1000, MaxDelayMS: 30000}, sc.Retry)
		assert.Equal(t, MissedSkip, sc.Missed)
		assert.Equal(t, KindTask, sc.Payload.Kind)

		res = call(t, tool, "a", "42", `{"action":"create","cron":"0 9 * * MON-FRI","message":"standup","process_handle":"p1"}`)
		assert.True(t, strings.HasPrefix(res.Content, "Created recurring schedule: sched_"), res.Content)
		res = call(t, tool, "a", "42", `{"action":"create","every_seconds":3600,"message":"stretch","at":null}`)
		assert.True(t, strings.HasPrefix(res.Content, "Created recurring schedule: sched_"), res.Content)
	})
}

func TestTool_CreateErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		tool := NewTool(h.s)
		for args, want := range map[string]string{
			`{"action":"create","message":"x"}`:                                     "Error: Must specify one of: at, every_seconds, or cron",
			`{"action":"create","every_seconds":60,"cron":"@daily","message":"x"}`:  "Error: Can only specify one timing option (at, every_seconds, or cron)",
			`{"action":"create","every_seconds":0,"message":"x"}`:                   "Error: every_seconds must be >= 1",
			`{"action":"create","every_seconds":5,"message":"x"}`:                   "Error: every_seconds must be >= 10 (agnx-lite runs nothing more often, to spare a small machine)",
			`{"action":"create","every_seconds":60}`:                                "Error: Must specify one of: message or task",
			`{"action":"create","every_seconds":60,"message":"x","task":"y"}`:       "Error: Can only specify one payload option (message or task)",
			`{"action":"create","at":"tomorrow","message":"x"}`:                     "Tool execution failed: failed to parse tool arguments: Invalid timestamp 'tomorrow': give an RFC 3339 time such as 2026-01-30T16:00:00Z",
			`{"action":"create","at":"1999-12-31T23:00:00Z","message":"x"}`:         "Failed to create schedule: at 1999-12-31T23:00:00Z is not in the future: give a later time",
			`{"action":"create","cron":"0 0 0 30 2 *","message":"x"}`:               "Failed to create schedule: cron expression \"0 0 0 30 2 *\" never fires: check its day, month and year fields",
			`{"action":"create","every_seconds":60,"message":"x","missed":"maybe"}`: "Failed to create schedule: missed \"maybe\" is unknown: use run_once or skip",
			`{"action":"create","every_seconds":60,"message":"x","max_retries":99}`: "Failed to create schedule: retries are 0 to 20, with delays of at most 24h0m0s",
			`{"action":"create","every_seconds":"60","message":"x"}`:                "Tool execution failed: failed to parse tool arguments: json: cannot unmarshal string into Go struct field scheduleArgs.every_seconds of type int64",
			`{"action":"cancel"}`: "Tool execution failed: failed to parse tool arguments: 'schedule_id' is required for cancel action",
			`{"action":"pause"}`:  "Unknown action: 'pause'. Use: create, list, cancel",
			`{"action":"create","every_seconds":60,"message":"` + big(MaxPayload) + `"}`: "Failed to create schedule: the message is 16385 bytes, over the 16384 a schedule may carry: make it shorter",
		} {
			res := call(t, tool, "a", "42", args)
			assert.True(t, res.IsError, args)
			assert.Equal(t, want, res.Content, args)
		}
		res, err := tool.Run(context.Background(), []byte(`{"action":"list"}`))
		require.NoError(t, err)
		assert.True(t, res.IsError, "no call, no agent")
		scs, err := h.s.List(context.Background(), "", true)
		require.NoError(t, err)
		assert.Empty(t, scs)
	})
}

func big(n int) string { return strings.Repeat("x", n+1) }

func TestTool_ListCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.UTC)
		tool := NewTool(h.s)
		assert.Equal(t, "No active schedules.", call(t, tool, "a", "42", `{"action":"list"}`).Content)
		one := strings.TrimPrefix(call(t, tool, "a", "42", `{"action":"create","at":"2000-01-30T16:00:00Z","message":"<b>"}`).Content, "Created one-shot schedule: ")
		two := strings.TrimPrefix(call(t, tool, "a", "42", `{"action":"create","every_seconds":7200,"task":"t","process_handle":"p1"}`).Content, "Created recurring schedule: ")
		mine := strings.TrimPrefix(call(t, tool, "b", "42", `{"action":"create","cron":"@daily","message":"b's"}`).Content, "Created recurring schedule: ")

		want := "Active schedules:\n[\n" +
			"  {\n    \"id\": \"" + two + "\",\n    \"timing\": \"every 2 hours\",\n    \"payload_type\": \"task\",\n    \"created_at\": \"2000-01-01 00:00 UTC\",\n    \"process_handle\": \"p1\"\n  },\n" +
			"  {\n    \"id\": \"" + one + "\",\n    \"timing\": \"at 2000-01-30 16:00 UTC\",\n    \"payload_type\": \"message\",\n    \"created_at\": \"2000-01-01 00:00 UTC\"\n  }\n]"
		assert.Equal(t, want, call(t, tool, "a", "42", `{"action":"list"}`).Content)

		res := call(t, tool, "a", "42", `{"action":"cancel","schedule_id":"`+mine+`"}`)
		assert.True(t, res.IsError)
		assert.Equal(t, "Failed to cancel schedule: schedule not found: "+mine, res.Content, "another agent's schedule is not found")
		res = call(t, tool, "a", "42", `{"action":"cancel","schedule_id":"`+one+`"}`)
		assert.False(t, res.IsError)
		assert.Equal(t, "Cancelled schedule: "+one, res.Content)
		assert.Contains(t, call(t, tool, "a", "42", `{"action":"list"}`).Content, two)
		assert.NotContains(t, call(t, tool, "a", "42", `{"action":"list"}`).Content, one)
	})
}

func TestFormatTiming(t *testing.T) {
	at := time.Date(2026, 1, 30, 17, 0, 0, 0, time.FixedZone("CET", 3600))
	for tm, want := range map[*Timing]string{
		{At: &at}:            "at 2026-01-30 16:00 UTC",
		{EverySeconds: 30}:   "every 30 seconds",
		{EverySeconds: 90}:   "every 1 minutes",
		{EverySeconds: 7200}: "every 2 hours",
		{Cron: "@daily"}:     "cron: @daily",
	} {
		assert.Equal(t, want, formatTiming(*tm))
	}
}

func FuzzTool(f *testing.F) {
	for _, s := range []string{
		`{"action":"create","at":"2000-01-30T16:00:00Z","message":"x"}`,
		`{"action":"create","every_seconds":60,"task":"x","max_retries":3,"retry_delay_ms":5,"max_retry_delay_ms":1}`,
		`{"action":"create","cron":"*/5 * * * *","message":"x","missed":"skip"}`,
		`{"action":"create","at":"2000-01-01T10:00","message":"x"}`,
		`{"action":"list"}`, `{"action":"cancel","schedule_id":"sched_x"}`, `null`, `[]`, `{"action":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, time.UTC)
			tool := NewTool(h.s)
			res := call(t, tool, "a", "42", string(args))
			if !res.IsError && strings.HasPrefix(res.Content, "Created ") {
				scs, err := h.s.List(context.Background(), "a", false)
				require.NoError(t, err)
				require.Len(t, scs, 1)
				assert.False(t, scs[0].Next.Before(time.Now()), "a new schedule runs in the future")
			}
		})
	})
}
