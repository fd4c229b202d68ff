package runtime

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agnx-lite/agnx-lite/agents"
)

// state is a session folded from its events: what the loop needs to run
// the next turn, and what a checkpoint stores. Its size is bounded by the
// agent's history budget, not by the length of the log: the full history
// stays in the events, the state keeps the context window.
type state struct {
	ID           string
	Agent        string
	Gateway      string
	ChatID       string
	OnDisconnect agents.OnDisconnect
	// Spawn is set when the session is a subagent's.
	Spawn *Spawn
	// Principal is who the session speaks for (principal.go).
	Principal agents.Principal
	Created   time.Time
	Updated   time.Time
	LastSeq   uint64

	// History is the context window sent to the model: the messages of
	// the events with seq >= WindowSeq, after Summary (state_window.go).
	// Elements are never modified once appended: in-flight requests share
	// the backing array. HistTokens estimates History and Summary.
	History    []Message
	HistTokens int
	// windowLen is how many messages History had when the checkpoint it
	// was loaded from was written: how many slots replayWindow sets aside.
	windowLen int
	// WindowSeq is the seq the window starts at (1 for a new session); 0
	// for a session loaded from a version 1 checkpoint, whose history came
	// with it, until its first compaction.
	WindowSeq uint64
	// Summary stands for the conversation before WindowSeq; "" when none.
	Summary string
	// marks are the quiet points inside the window, oldest first.
	marks []mark
	// TrimNoticed is set once the session was told that its history was
	// trimmed without a summary (an error event CodeHistoryTrimmed).
	TrimNoticed bool
	// Pending holds user messages that arrived while a turn ran; they start
	// the next turn, unless all of them are passive (PendingReply false):
	// then they only join the history.
	Pending      []Message
	PendingReply bool
	// Origin is the Event.Origin of the message that started the active
	// (or last) turn: empty when a person sent it. PendingOrigin is the
	// one the pending messages will start theirs with: the last of them
	// that asks for a reply decides.
	Origin        string
	PendingOrigin string
	// Silent are the latest silent_message events (at most maxSilent), for
	// the group context the model is shown.
	Silent []Note
	// TurnActive is true from the user message that starts a turn to its
	// turn_end.
	TurnActive bool
	// Rounds counts the model answers of the active turn, so that
	// max_tool_iterations holds across a restart that resumes the turn.
	Rounds int
	// OpenCalls are tool calls asked for and not yet answered.
	OpenCalls []ToolCall
	// Approvals are the open calls waiting for a user's decision.
	Approvals []Approval
	// AlwaysAllowed are "tool\x00subject" pairs a user allowed for the
	// rest of the session.
	AlwaysAllowed []string

	Usage   Usage
	Turns   int
	Preview string
	Ended   bool

	// Children are the sessions this one spawned with the agent tool, in
	// order (from the spawn calls' results).
	Children []ChildRef
	// TurnSeq is the seq the active (or last) turn started at: children
	// with a later Seq were spawned in it.
	TurnSeq uint64
	// LastEnd is the outcome of the last turn_end; LastError the last
	// error's sentence since the last turn started (what a parent is told
	// of a child that failed).
	LastEnd   string
	LastError string
}

// Note is a silent message as the model may see it.
type Note struct {
	Content string
	At      time.Time
}

// Bounds of the silent notes a session keeps (the context buffer's
// max_messages is at most maxSilent).
const (
	maxSilent     = 200
	maxNoteLength = 2048 // bytes of one note's content
)

// Approval is a tool call waiting for a user's decision.
type Approval struct {
	CallID  string
	Tool    string
	Subject string
	At      time.Time
}

// interruptedResult is the tool result recorded for a call that never
// finished, so the context stays valid for providers that require every
// tool call to be answered.
const interruptedResult = "error: the tool call was interrupted before it returned a result"

// apply folds one durable event into the state. It is the only place state
// changes, so replaying the log after a checkpoint rebuilds the same state.
// It never shortens the window on its own: the loop records a
// history_compaction for that.
func (s *state) apply(e *Event) {
	s.LastSeq = e.Seq
	s.Updated = e.Time
	switch e.Type {
	case EvSessionStart:
		s.Agent, s.OnDisconnect = e.Agent, e.OnDisconnect
		s.Gateway, s.ChatID = e.Gateway, e.ChatID
		s.Spawn = e.Spawn
		s.Principal = principalOr(e.Principal, e.Gateway, e.ChatID, s.parent())
		s.Created = e.Time
		if s.WindowSeq == 0 {
			s.WindowSeq = e.Seq
		}
	case EvUserMessage:
		m := Message{Role: RoleUser, Content: e.Content}
		if s.Preview == "" {
			s.Preview = preview(e.Content)
		}
		if s.TurnActive && e.Steering && len(s.OpenCalls) == 0 {
			s.push(m) // an after_tool hook's, for the running turn
			return
		}
		if s.TurnActive {
			s.Pending = append(s.Pending, m)
			s.PendingReply = s.PendingReply || !e.Passive
			if !e.Passive {
				s.PendingOrigin = e.Origin
			}
			return
		}
		s.push(m)
		s.TurnActive = !e.Passive
		if !e.Passive {
			s.Origin, s.LastError, s.TurnSeq = e.Origin, "", e.Seq
		}
	case EvSilentMessage:
		if len(s.Silent) >= maxSilent {
			s.Silent = slices.Delete(s.Silent, 0, len(s.Silent)-maxSilent+1)
		}
		s.Silent = append(s.Silent, Note{Content: truncateNote(e.Content), At: e.Time})
	case EvAssistant:
		if e.Origin != "" {
			// A notice (Loop.Notice): said to the chat outside any model
			// call; a running turn's context gets it after its end.
			m := Message{Role: RoleAssistant, Content: e.Content}
			if s.TurnActive {
				s.Pending = append(s.Pending, m)
				return
			}
			s.push(m)
			return
		}
		s.push(Message{Role: RoleAssistant, Content: e.Content, ToolCalls: e.ToolCalls, Thinking: e.Thinking})
		s.OpenCalls = e.ToolCalls
		if s.TurnActive {
			s.Rounds++
		}
		s.Usage = s.Usage.Add(e.Usage)
	case EvToolResult:
		s.answer(e.CallID, e.ToolName, e.Content, !e.Success)
		if e.ToolName == AgentToolName && e.Success {
			s.noteSpawn(e.Details, e.Seq)
		}
	case EvApprovalRequired:
		s.Approvals = append(s.Approvals, Approval{CallID: e.CallID, Tool: e.ToolName, Subject: e.Content, At: e.Time})
	case EvApprovalDecision:
		for i, a := range s.Approvals {
			if a.CallID != e.CallID {
				continue
			}
			s.Approvals = append(s.Approvals[:i:i], s.Approvals[i+1:]...)
			if e.Decision == AllowAlways {
				s.AlwaysAllowed = append(s.AlwaysAllowed, a.Tool+"\x00"+a.Subject)
			}
			break
		}
	case EvTurnEnd:
		s.Approvals = nil
		for len(s.OpenCalls) > 0 {
			c := s.OpenCalls[0]
			s.answer(c.ID, c.Name, interruptedResult, true)
		}
		s.TurnActive = false
		s.Rounds = 0
		s.Turns++
		s.LastEnd = e.Reason
		if len(s.Pending) == 0 {
			// A quiet point: the window may start here (state_window.go).
			s.marks = append(s.marks, mark{at: len(s.History), seq: e.Seq + 1})
		} else {
			for _, m := range s.Pending {
				s.push(m)
			}
			s.Pending = nil
			s.TurnActive = s.PendingReply
			if s.PendingReply {
				s.Origin, s.LastError, s.TurnSeq = s.PendingOrigin, "", e.Seq
			}
			s.PendingReply, s.PendingOrigin = false, ""
		}
	case EvSessionEnd:
		s.Ended = true
	case EvHistoryCompaction:
		s.compact(e)
		s.Usage = s.Usage.Add(e.Usage) // the summary call's
	case EvError:
		s.TrimNoticed = s.TrimNoticed || e.Code == CodeHistoryTrimmed
		if e.Code != CodeHistoryTrimmed && e.Code != CodeToolLimit {
			s.LastError = cutRunes(e.Content, maxLastError)
		}
	case EvToolCall, EvToken, EvToolProgress:
		// tool_call (assistant_response brought the calls) changes
		// nothing the model sees; token and tool_progress are never
		// applied.
	}
}

func (s *state) push(m Message) {
	s.History = append(s.History, m)
	s.HistTokens += estimateTokens(&m)
}

// answer records a tool result and closes its open call. Results for calls
// that are not open (a duplicate, or one after an interruption) are ignored
// so the context never carries an orphan tool message.
func (s *state) answer(id, name, content string, failed bool) {
	for i, c := range s.OpenCalls {
		if c.ID != id {
			continue
		}
		if name == "" {
			name = c.Name
		}
		s.OpenCalls = append(s.OpenCalls[:i:i], s.OpenCalls[i+1:]...)
		s.push(Message{Role: RoleTool, Content: content, ToolCallID: id, ToolName: name, IsError: failed})
		return
	}
}

// estimateTokens is a cheap stand-in for a tokenizer: about four bytes a
// token, plus a few tokens of framing per message.
func estimateTokens(m *Message) int {
	n := len(m.Content) + len(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Arguments) + len(c.ID)
	}
	return n/4 + 4
}

func preview(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// status is the session's state in listings.
func (s *state) status() SessionStatus {
	switch {
	case s.Ended:
		return SessionCompleted
	case len(s.Approvals) > 0:
		return SessionPaused
	case s.TurnActive:
		return SessionRunning
	}
	return SessionActive
}

// alwaysAllowed reports whether the user allowed this call for the
// session.
func (s *state) alwaysAllowed(tool, subject string) bool {
	return slices.Contains(s.AlwaysAllowed, tool+"\x00"+subject)
}

// approval returns the pending approval of a call.
// approvalSubject is what the user is asked about for callID, "" when
// nothing is pending for it.
func (s *state) approvalSubject(callID string) string {
	a, _ := s.approval(callID)
	return a.Subject
}

func (s *state) approval(callID string) (Approval, bool) {
	for _, a := range s.Approvals {
		if a.CallID == callID {
			return a, true
		}
	}
	return Approval{}, false
}

// truncateNote cuts a silent note's content to maxNoteLength bytes, on a
// character boundary.
func truncateNote(c string) string { return cutRunes(c, maxNoteLength) }

// cutRunes cuts c to at most n bytes on a character boundary, marking the
// cut with "…".
func cutRunes(c string, n int) string {
	if len(c) <= n {
		return c
	}
	c = c[:n]
	for len(c) > 0 && !utf8.ValidString(c) {
		c = c[:len(c)-1]
	}
	return c + "…"
}

// groupContext is the system block of recent silent notes the model is
// shown: at most max of them, none older than maxAge. "" when none.
func (s *state) groupContext(now time.Time, cb agents.ContextBuffer) string {
	max, maxAge := cb.MaxMessages, time.Duration(cb.MaxAgeHours)*time.Hour
	notes := s.Silent
	for len(notes) > 0 && now.Sub(notes[0].At) > maxAge {
		notes = notes[1:]
	}
	if len(notes) > max {
		notes = notes[len(notes)-max:]
	}
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Recent group conversation before you were mentioned:\n\n")
	for _, n := range notes {
		b.WriteString(n.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// withGroupContext appends the group context block to the system prompt.
func withGroupContext(system, group string) string {
	switch {
	case group == "":
		return system
	case system == "":
		return group
	}
	return system + "\n\n" + group
}
