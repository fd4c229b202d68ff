package runtime

// interruptedByRestart is the result a resumed turn records for a tool
// call that may have run before the process stopped.
const interruptedByRestart = "error: this tool call was interrupted by a restart; its effect is unknown — check before repeating it"

// resumeCalls goes on with a turn rebuilt from the log that stopped while
// its tool calls ran (after a crash, a shutdown of a continue agent, or a
// failed commit). Tool calls start only once the assistant message that
// asked for them is committed, so every open call may have run, in part
// or in full, and an append or a payment must not happen twice: such a
// call is never run again. It gets a durable error result saying so, and
// the model, told, decides what to do. A call still waiting for a user's
// approval never started; it waits on. An agent-tool call runs again
// (see AgentTool).
func (l *Loop) resumeCalls(s *session) {
	t := s.turn
	var waiting []ToolCall
	for _, c := range append([]ToolCall(nil), s.st.OpenCalls...) { // answering edits OpenCalls
		if _, ok := s.st.approval(c.ID); ok {
			waiting = append(waiting, c)
			continue
		}
		if _, ok := t.agent.tool(c.Name).(AgentTool); ok {
			// Its effects are committed with its result: open, it never
			// happened, and a wait only reads.
			waiting = append(waiting, c)
			continue
		}
		l.endAsks(s, c.ID)
		l.log.Warn("tool call interrupted by a restart; not run again", "session", s.st.ID, "tool", c.Name, "call", c.ID)
		l.record(s, Event{Type: EvToolResult, CallID: c.ID, ToolName: c.Name, Content: interruptedByRestart})
	}
	if len(waiting) > 0 {
		l.startTools(s, waiting)
		return
	}
	l.afterCommit(func(err error) {
		if err == nil && s.turn == t {
			l.callModel(s)
		}
	})
}
