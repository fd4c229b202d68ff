package runtime

import "slices"

// EventTypeInfo describes one event type.
type EventTypeInfo struct {
	Type EventType
	// Durable types are stored in the session's log and have a Seq; the
	// others go to live subscribers only, with Seq 0.
	Durable bool
	// Doc says what the event means and which fields it sets.
	Doc string
}

// eventTypes is the one list of event types. Adding a type means adding it
// here (beside its constant in event.go); TestEventTypes then fails until
// AppendJSON and DecodeEvent carry it, and names (file:line) every switch
// on event types in the module that does not list it in a case: one that
// acts on it, or one that ignores it on purpose and says why. A default
// clause does not count.
var eventTypes = [...]EventTypeInfo{
	{EvSessionStart, true, "a session was created: Agent, OnDisconnect, and Gateway and ChatID when a gateway created it"},
	{EvUserMessage, true, "a user's message, Content, from SenderID (SenderName); it starts a turn or waits for the running one to end, unless Passive (JSON \"passive\": true): then it joins the conversation without a turn; Steering (\"steering\": true) marks an after_tool hook's note, which joins the running turn"},
	{EvAssistant, true, "one model call's final answer: Content, the ToolCalls it asks for, its Usage, the signed Thinking its provider needs back"},
	{EvToolCall, true, "a tool call starts: CallID, ToolName, Arguments"},
	{EvToolResult, true, "a tool call's result: CallID, ToolName, Success, Content (what the model sees) and Details (JSON for clients)"},
	{EvApprovalRequired, true, "a tool call waits for a user's yes or no: CallID, ToolName, Content is what it would do (the command, the path)"},
	{EvApprovalDecision, true, "the answer to an approval: CallID, Decision (allow_once, allow_always, deny), Reason (who decided: user, timeout)"},
	{EvError, true, "the turn met an error: Code and Content, one sentence for the user"},
	{EvTurnEnd, true, "a turn ended: Reason is its outcome (completed, failed, cancelled, interrupted, paused), Usage its tokens"},
	{EvSessionEnd, true, "the session ended: Reason"},
	{EvSilentMessage, true, "a group message kept out of the conversation: Content (prefixed with its sender's name), SenderID, SenderName; the model sees the recent ones (spec.access.groups.context_buffer) as background when it is next addressed"},
	{EvHistoryCompaction, true, "the context window was compacted: messages before Compaction.Upto (JSON \"upto\") are no longer sent to the model; Content (\"content\") is the summary that stands for them, \"\" for a plain trim; Compaction.Method (summary or trim), CoversFrom/CoversTo the seqs it replaced, TokensBefore/TokensAfter the window's estimated size, Usage the summary call's tokens"},
	{EvToken, false, "a piece of the answer as the model streams it: Content; the assistant_response that follows holds the whole text"},
	{EvToolProgress, false, "what a long tool call is doing (a coding worker's steps): CallID, ToolName, Content; the tool_result that follows holds the outcome"},
}

// eventType is the type named b, without a copy for the known ones: the
// log is decoded event by event whenever a session comes back to memory.
func eventType(b []byte) EventType {
	for i := range eventTypes {
		if string(eventTypes[i].Type) == string(b) {
			return eventTypes[i].Type
		}
	}
	return EventType(b)
}

// EventTypes returns every event type, durable ones first.
func EventTypes() []EventTypeInfo { return slices.Clone(eventTypes[:]) }

// durable reports whether events of type t belong in the log. Types not
// in the table count as durable: DecodeEvent refuses them, so they never
// reach the log unnoticed.
func durable(t EventType) bool {
	for i := range eventTypes {
		if eventTypes[i].Type == t {
			return eventTypes[i].Durable
		}
	}
	return true
}
