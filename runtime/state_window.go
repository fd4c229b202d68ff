package runtime

// The context window. History holds the messages of the events with seq
// >= WindowSeq, after Summary, which stands for everything before. The
// window only ever starts at a mark: a quiet point (a turn_end with
// nothing pending) from which replaying the log rebuilds the rest of the
// history exactly. So a cut never splits a tool call from its result, and
// a checkpoint need not store the history: load replays it from
// WindowSeq (checkpoint.go).

// mark is a quiet point inside the window: replaying the events from seq
// into a fresh state gives History[at:].
type mark struct {
	at  int
	seq uint64
}

// summaryHeader introduces the summary in the request's system prompt.
const summaryHeader = "Summary of the earlier conversation (older messages are no longer shown):\n"

// summaryTokens is what the summary adds to the window, by the same
// estimate as a message's.
func summaryTokens(summary string) int {
	if summary == "" {
		return 0
	}
	return (len(summaryHeader)+len(summary))/4 + 4
}

// withSummary appends the summary block to the system prompt.
func withSummary(system, summary string) string {
	if summary == "" {
		return system
	}
	return withGroupContext(system, summaryHeader+summary)
}

// compact folds a history_compaction: the window starts at c.Upto from
// now on. A compaction whose Upto is no mark of this state (a damaged or
// foreign log) changes nothing.
func (s *state) compact(e *Event) {
	c := e.Compaction
	if c == nil {
		return
	}
	if c.Upto != s.WindowSeq {
		i := s.markIndex(c.Upto)
		if i < 0 {
			return
		}
		s.cutAt(i)
	}
	s.WindowSeq = c.Upto
	if c.Method == CompactSummary {
		s.HistTokens += summaryTokens(e.Content) - summaryTokens(s.Summary)
		s.Summary = e.Content
	}
}

// markIndex is the index in marks of the mark at seq, or -1.
func (s *state) markIndex(seq uint64) int {
	for i, m := range s.marks {
		if m.seq == seq {
			return i
		}
	}
	return -1
}

// cutAt drops the history before marks[i] and the marks up to it.
func (s *state) cutAt(i int) {
	at := s.marks[i].at
	for j := range s.History[:at] {
		s.HistTokens -= estimateTokens(&s.History[j])
	}
	// Copy into a new array so the dropped prefix can be freed; the old
	// array may still be read by an in-flight request, so it is not reused.
	s.History = append([]Message(nil), s.History[at:]...)
	rest := make([]mark, 0, len(s.marks)-i-1)
	for _, m := range s.marks[i+1:] {
		rest = append(rest, mark{at: m.at - at, seq: m.seq})
	}
	s.marks = rest
}

// cutPlan is where a compaction would cut: marks[mark], with the tokens
// of the messages that stay.
type cutPlan struct {
	mark int
	kept int // tokens of History[marks[mark].at:]
}

// plan finds the cut that keeps at most keep tokens of messages, cutting
// as little as that needs; when no cut keeps so few, the one that cuts
// the most. The newest exchange always stays: a cut is made only at a
// mark where a user message starts an exchange and not past the last
// user message. false when there is no such mark.
func (s *state) plan(keep int) (cutPlan, bool) {
	last := -1
	for i := len(s.History) - 1; i >= 0; i-- {
		if s.History[i].Role == RoleUser {
			last = i
			break
		}
	}
	best, found := cutPlan{}, false
	tokens := s.HistTokens - summaryTokens(s.Summary)
	from := 0 // History[:from] is subtracted from tokens
	for i, m := range s.marks {
		if m.at <= 0 || m.at > last || s.History[m.at].Role != RoleUser {
			continue
		}
		for ; from < m.at; from++ {
			tokens -= estimateTokens(&s.History[from])
		}
		best, found = cutPlan{mark: i, kept: tokens}, true
		if tokens <= keep {
			break
		}
	}
	return best, found
}

// trimEvent is the history_compaction that cuts the oldest whole
// exchanges once the window outgrows budget, down to three quarters of it
// (so the copy happens every few turns, not every turn), keeping the
// summary it has. false when the window fits or nothing can be cut.
func (s *state) trimEvent(budget int) (Event, bool) {
	if budget <= 0 || s.HistTokens <= budget {
		return Event{}, false
	}
	p, ok := s.plan(budget*3/4 - summaryTokens(s.Summary))
	if !ok {
		return Event{}, false
	}
	return s.compactionEvent(p, CompactTrim, s.Summary), true
}

// compactionEvent is the history_compaction of plan p.
func (s *state) compactionEvent(p cutPlan, method, summary string) Event {
	m := s.marks[p.mark]
	e := Event{Type: EvHistoryCompaction, Compaction: &Compaction{
		Upto: m.seq, Method: method, CoversFrom: s.WindowSeq, CoversTo: m.seq - 1,
		TokensBefore: s.HistTokens, TokensAfter: p.kept + summaryTokens(summary),
	}}
	if method == CompactSummary {
		e.Content = summary
	}
	return e
}

// planAt is the cut at marks[i].
func (s *state) planAt(i int) cutPlan {
	kept := s.HistTokens - summaryTokens(s.Summary)
	for j := range s.History[:s.marks[i].at] {
		kept -= estimateTokens(&s.History[j])
	}
	return cutPlan{mark: i, kept: kept}
}
