package sched

import "strings"

// OriginPrefix begins the runtime.Input.Origin (and Notice.Origin) of the
// messages a schedule's runs store: "schedule:<id>".
const OriginPrefix = "schedule:"

// Origin is the origin a Firer gives the message of schedule id's run.
func Origin(id string) string { return OriginPrefix + id }

// FromOrigin returns the schedule id an origin names, if it names one: a
// TurnEnded handler uses it to Report a task's outcome.
func FromOrigin(origin string) (id string, ok bool) {
	id, ok = strings.CutPrefix(origin, OriginPrefix)
	return id, ok && id != ""
}

// TaskMessage is the user message a task's turn starts with, Agnx's
// words around the task.
func TaskMessage(task string) string {
	return "[Scheduled Task]\n\n" + task + "\n\n(This is an automated task. Send the result to this chat.)"
}
