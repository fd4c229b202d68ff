package sched

import (
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// IDPrefix begins every schedule id, as in Agnx: sched_<ULID>.
const IDPrefix = "sched_"

// Status is a schedule's state, as in Agnx.
type Status string

// The statuses.
const (
	Active    Status = "active"
	Completed Status = "completed" // a one-shot that ran (or was skipped)
	Cancelled Status = "cancelled"
)

// Missed policies: what a schedule does with the runs that fell due while
// the daemon was down. Either way it goes on with its next run, and the
// runs it missed are logged and recorded.
const (
	// MissedRunOnce fires once, late, for all the runs missed (the
	// default).
	MissedRunOnce = "run_once"
	// MissedSkip fires none of them.
	MissedSkip = "skip"
)

// Payload kinds.
const (
	KindMessage   = "message"   // Text is sent to the destination as it is
	KindTask      = "task"      // Text is a task for the agent: a turn runs, its answer is sent
	KindHeartbeat = "heartbeat" // the agent's heartbeat turn (lite's own schedules)
)

// Schedule is one schedule, as stored.
type Schedule struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// CreatedBySession is the session whose tool call made it; empty
	// for schedules lite makes itself (heartbeats).
	CreatedBySession string      `json:"created_by_session,omitempty"`
	Destination      Destination `json:"destination"`
	Timing           Timing      `json:"schedule"`
	Payload          Payload     `json:"payload"`
	CreatedAt        time.Time   `json:"created_at"`
	Status           Status      `json:"status"`
	Retry            *Retry      `json:"retry,omitempty"`
	// ProcessHandle links it to a background process: it is cancelled
	// when the process ends.
	ProcessHandle string `json:"process_handle,omitempty"`
	// Missed is MissedRunOnce (empty means it) or MissedSkip.
	Missed string `json:"missed,omitempty"`
	// ActiveHours, "HH:MM-HH:MM" in the schedule's time zone, limits the
	// runs to that window (it may wrap midnight); a run that falls outside
	// waits for the window's next opening. Empty: any time.
	ActiveHours string `json:"active_hours,omitempty"`

	// Next is when it runs next (zero once it is done).
	Next time.Time `json:"next,omitzero"`
	// Attempt counts the failed tries of the run due at Next (retries).
	Attempt int `json:"attempt,omitempty"`
	// Runs and Failures count its runs and its failed ones.
	Runs     int  `json:"runs,omitempty"`
	Failures int  `json:"failures,omitempty"`
	LastRun  *Run `json:"last_run,omitempty"`
}

// Recurring reports whether it runs more than once.
func (s *Schedule) Recurring() bool { return s.Timing.At == nil }

// Destination is where a schedule's messages go: a gateway's chat
// (Gateway and ChatID, as in Agnx), or, lite's extension, a session of the
// HTTP API (SessionID, no gateway).
type Destination struct {
	Gateway   string `json:"gateway,omitempty"`
	ChatID    string `json:"chat_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
}

// Timing is exactly one of At, EverySeconds or Cron.
type Timing struct {
	At           *time.Time `json:"at,omitempty"`
	EverySeconds int64      `json:"every_seconds,omitempty"`
	// Anchor is the time the ticks of EverySeconds count from.
	Anchor time.Time `json:"anchor,omitzero"`
	// Cron is a cron expression: 6 or 7 fields, seconds first (Agnx's),
	// or the classic 5 fields (read as "0 " + expr).
	Cron string `json:"cron,omitempty"`
	// TZ is the IANA zone cron and active hours are read in; empty: the
	// daemon's (scheduler.timezone in agnx.yaml, else the system's).
	TZ string `json:"tz,omitempty"`
}

// Payload is what a run does.
type Payload struct {
	Kind string `json:"kind"` // KindMessage, KindTask or KindHeartbeat
	Text string `json:"text"`
}

// StartsTurn reports whether a run of p starts a turn of the agent (a
// task, a heartbeat): those count against Options.MaxTurnsPerHour.
func (p Payload) StartsTurn() bool { return p.Kind == KindTask || p.Kind == KindHeartbeat }

// Retry is how a failed run is tried again: after InitialDelayMS, doubled
// each time up to MaxDelayMS, with ±20 % jitter, MaxRetries times; then
// the run counts as failed and a recurring schedule goes on with its next
// run. Agnx's defaults: 3, 1000, 30000.
type Retry struct {
	MaxRetries     int   `json:"max_retries"`
	InitialDelayMS int64 `json:"initial_delay_ms"`
	MaxDelayMS     int64 `json:"max_delay_ms"`
}

// Run outcomes.
const (
	RunFired    = "fired"    // its message was stored (a task's turn started)
	RunOK       = "ok"       // a task's turn completed
	RunFailed   = "failed"   // it failed, and will not be tried again
	RunRetrying = "retrying" // it failed and will be tried again
	RunSkipped  = "skipped"  // not run: Run.Reason says why
)

// Causes of skipped runs, as Counts.Skipped keys them (a Firer's
// SkipError names its own, such as "token_budget").
const (
	// SkipMissed: missed while the daemon was down, and its policy is
	// MissedSkip.
	SkipMissed = "missed"
	// SkipTurnCeiling: its agent's schedules started
	// Options.MaxTurnsPerHour turns in the last hour.
	SkipTurnCeiling = "turn_ceiling"
)

// SkipError is what a Firer returns for a run it will not start on
// purpose (lite's: the agent used its daily token budget). The run is
// recorded skipped with Reason, neither failed nor retried, and counted
// under Code.
type SkipError struct {
	Code   string
	Reason string
}

// Error is the reason, one sentence.
func (e *SkipError) Error() string { return e.Reason }

// Run is one run of a schedule, as its log keeps it.
type Run struct {
	// Due is when it was due; Fired when it ran (zero for a skipped run).
	Due   time.Time `json:"due"`
	Fired time.Time `json:"fired,omitzero"`
	// Late is set when it ran after a downtime: Missed is how many runs
	// fell due meanwhile (this one included).
	Late    bool   `json:"late,omitempty"`
	Missed  int    `json:"missed,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Reason says why a skipped run was skipped, in one sentence.
	Reason string `json:"reason,omitempty"`
	// SessionID is the session its message went to.
	SessionID string `json:"session_id,omitempty"`
}

// Firing is one due run handed to the Firer.
type Firing struct {
	Schedule Schedule
	Run      Run
	// Record writes the run as done: the schedule's next run and the
	// run's log entry. The Firer MUST run it in the transaction that
	// stores the message (runtime.Input.Commit, runtime.Notice.Commit),
	// so that a run is recorded exactly when its message is stored: after
	// a crash a recorded run never runs again, and one not recorded runs
	// once. Its SessionID is filled in by SetSession before.
	Record func(*storage.Tx) error
	// SetSession tells the record which session the message went to.
	SetSession func(id string)
}

// Firer runs what a due schedule says. Fire returns once the run's message
// is committed with f.Record (nil), or with why nothing was stored: the
// service then records the failure, and retries or goes on with the next
// run. It is called from the service's workers, never its timer.
type Firer interface {
	Fire(ctx context.Context, f Firing) error
}
