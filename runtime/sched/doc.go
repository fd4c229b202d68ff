// Package sched owns schedules: Agnx's schedule records (one-shot `at`,
// `every_seconds`, `cron`; a message or a task; retries), their cron
// expressions and time zones, their runs and the policy for runs missed
// while the daemon was down, their storage in agnx.db, and the one timer
// that fires them all. What a firing does (a message to a chat, a turn of
// the agent) is its Firer's business: the composition root's.
package sched
