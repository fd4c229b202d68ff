// Package sched owns schedules: Agnx's schedule records (one-shot `at`,
// `every_seconds`, `cron`; a message or a task; retries), their cron
// expressions and time zones, their runs and the policy for runs missed
// while the daemon was down, their storage in agnx.db, and the one timer
// that fires them all. What a firing does (a message to a chat, a turn of
// the agent) is its Firer's business: the composition root's.
//
// It imports storage and runtime (for runtime.Tool, CallFrom and NewID),
// never lite.
//
// # Storage
//
// Schedules are JSON records in agnx.db's index space, scope "sched":
// kind "s" by id, kind "r" the run log keyed by id, a zero byte, the
// big-endian due time and attempt; each schedule keeps its last 100 runs.
// Writes go through DB.Commit (the runtime loop's group commit) or, for a
// run, through Firing.Record inside the transaction that stores its
// message.
//
// # Timer
//
// Service.Run owns one time.Timer and a min-heap of (next run, id, agent): a
// waiting schedule costs about 150 bytes and no goroutine. A due schedule
// is handed to one of at most Options.Workers short-lived goroutines,
// which reads its record, builds the Firing and calls the Firer; a
// schedule is never fired twice at once. The timer waits at most a
// minute while something is armed, so a wall clock that jumps (NTP setting
// a Pi's clock after boot) delays nothing by more than that.
//
// # Limits
//
// A model makes schedules, so nothing it says can make them fire without
// rest. A schedule's runs are at least MinRunGap (10 s) apart: an
// interval under it, or a cron expression whose shortest gap between two
// runs is under it (Cron.MinGap, computed from the fields), is refused
// when it is made. One agent's runs together are at least MinRunGap
// apart too: a run due sooner after the agent's last one (a burst of
// one-shots, many schedules, retries, a record stored before the floor)
// is held in the heap until then, and the hold does not count as lateness.
// The turns an agent's schedules start (tasks, heartbeats) are counted
// over the last hour; past Options.MaxTurnsPerHour a run is skipped, with
// its reason in the run log, never queued. A Firer may skip a run too
// (SkipError: lite's when the agent used its daily token budget). Counts
// reports holds and skips by cause. The counts and holds live in memory:
// a restart starts them afresh.
//
// # Exactly once
//
// A run counts as done exactly when Firing.Record has committed, in the
// same transaction as the run's message. After a crash, a run that was
// not recorded runs again, once (late, when its time is well past); a
// recorded one never runs again. A Firer that returns an error has stored
// nothing: the failure is recorded, and the run retried (Retry) or the
// schedule moved on to its next run.
//
// # Missed runs and failures
//
// A run more than a minute late, or with later ticks already due, is
// late: Run.Missed counts the ticks due meanwhile (this one included; for
// cron, counting stops at 10,000). Policy run_once (the default) fires it
// once with Late set, skip records one RunSkipped entry (Run.Reason says
// why) and fires nothing;
// either way the next run is the first tick after now, and it is logged.
// A one-shot whose time passed while the daemon was down fires once at
// start (under skip it is recorded skipped and completes). A failed run
// is retried after initial·2^n (capped, ±20 % jitter) up to MaxRetries;
// then a recurring schedule goes on with its next tick (it never stops on
// failures) and a one-shot completes with its run failed. Agnx's rule that
// a schedule without Retry is not retried is kept.
//
// # Time zones
//
// Cron expressions and active hours are read in the schedule's zone
// (Timing.TZ, else Options.Location). Across daylight-saving changes cron
// runs as cron(8) does: a wall-clock time the spring change skips runs
// once at the first instant after the gap, and one the autumn change
// repeats runs once, at its first occurrence.
//
// # Caveats
//
// Report waits for DB.Commit: it must not be called on the runtime loop's
// goroutine (TurnEnded handlers run there). Create counts the agent's
// active schedules by reading all records, a few milliseconds per thousand.
package sched
