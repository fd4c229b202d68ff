package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Compaction keeps a session's window within its agent's history budget.
// After a turn_end leaves the window over the budget, the loop asks the
// agent's model, in a worker, to summarise the older part, and records a
// history_compaction that replaces it with the summary; the session's
// next turn waits for that (at most the summary call's timeout). Without a
// summary (no model, summarize: false, a failed call) the oldest
// exchanges are dropped instead, and the session is told so once.

// CodeHistoryTrimmed is the code of the error event that tells a session,
// once, that older messages left its window without a summary.
const CodeHistoryTrimmed = "history_trimmed"

// Advisory reports whether an error event of this code tells of something
// that did not stop a turn (its tool rounds ran out, its history was
// trimmed) rather than a failure. A history_trimmed one is recorded
// between turns, so a client following the next turn must not take it for
// that turn's failure.
func Advisory(code string) bool { return code == CodeToolLimit || code == CodeHistoryTrimmed }

// CompactResult is what Loop.Compact did.
type CompactResult struct {
	// Method is CompactSummary, CompactTrim or CompactNone.
	Method                    string
	TokensBefore, TokensAfter int
	// CoversTo is the last seq whose messages left the window; 0 for none.
	CoversTo uint64
}

// ErrTurnRunning refuses a manual compaction while a turn runs: the cut
// is made at quiet points only.
var ErrTurnRunning = errors.New("a turn is running: try /compact again after it ends")

// compaction is one under way, on its session (session.compacting).
type compaction struct {
	upto   uint64 // the mark the summary call's prefix ends at
	manual bool   // Loop.Compact: everything but the newest exchange
	// maxBytes bounds the summary kept, from the call's output tokens, so
	// a model that ignores the bound cannot outgrow the window.
	maxBytes int
	// done, for a manual one, is told the result once it is committed.
	done func(CompactResult, error)
}

// Compact summarises all of the session's window but its newest exchange
// now, and returns once the history_compaction is committed. Without a
// summary it trims instead (Method CompactTrim); with one exchange only it
// does nothing (CompactNone). It refuses while a turn runs.
func (l *Loop) Compact(ctx context.Context, sessionID string) (CompactResult, error) {
	reply := make(chan result[CompactResult], 1)
	return call(ctx, l, &compactReq{sid: sessionID, reply: reply}, reply)
}

type compactReq struct {
	sid   string
	reply chan result[CompactResult]
}

func (r *compactReq) handle(l *Loop) {
	if l.draining {
		r.reply <- result[CompactResult]{err: ErrClosed}
		return
	}
	s, err := l.loadOpen(r.sid)
	switch {
	case err != nil:
	case s.turn != nil || s.st.TurnActive:
		err = ErrTurnRunning
	case s.compacting != nil:
		err = errors.New("the conversation is being compacted already: try again in a moment")
	}
	if err != nil {
		r.reply <- result[CompactResult]{err: err}
		return
	}
	l.startCompaction(s, &compaction{manual: true, done: func(res CompactResult, err error) {
		r.reply <- result[CompactResult]{v: res, err: err}
	}})
}

// compactAfterTurn starts a compaction when the turn_end just recorded
// left the window over the budget.
func (l *Loop) compactAfterTurn(s *session) {
	if s.compacting != nil || s.budget <= 0 || s.st.HistTokens <= s.budget {
		return
	}
	if l.draining || l.runCtx == nil || l.runCtx.Err() != nil {
		return // shutting down: the next turn end compacts
	}
	if _, ok := s.st.plan(s.budget / 2); !ok {
		return // one exchange outgrew the budget: nothing can be cut
	}
	l.startCompaction(s, &compaction{})
}

// startCompaction marks the session compacting and goes on once its
// agent is at hand.
func (l *Loop) startCompaction(s *session, c *compaction) {
	s.compacting = c
	l.withAgent(s.st.Agent, func(ag *LoadedAgent, err error) {
		if l.sessions[s.st.ID] != s || s.compacting != c {
			return
		}
		l.summarise(s, c, ag, err)
	})
}

// summarise starts the summary call, or trims when there is no summary
// to be had.
func (l *Loop) summarise(s *session, c *compaction, ag *LoadedAgent, err error) {
	budget := s.budget
	if budget <= 0 {
		budget = historyBudget(ag)
	}
	keep := budget / 2
	if c.manual {
		keep = 0 // the cut that cuts the most: all but the newest exchange
	}
	p, ok := s.st.plan(keep)
	if !ok {
		l.endCompaction(s, c, CompactResult{Method: CompactNone, TokensBefore: s.st.HistTokens, TokensAfter: s.st.HistTokens})
		return
	}
	why := ""
	switch {
	case err != nil:
		why = "its agent could not be loaded"
	case ag == nil || ag.Provider == nil || ag.Spec == nil:
		why = "its agent has no model"
	case !ag.Spec.Session.Context.Summarizes():
		why = "spec.session.context.summarize is false"
	}
	if why != "" {
		l.trimInstead(s, c, why)
		return
	}
	c.upto = s.st.marks[p.mark].seq
	at := s.st.marks[p.mark].at
	req := summaryRequest(ag.Spec, s.st.Summary, s.st.History[:at:at], budget)
	c.maxBytes = req.MaxOutputTokens * 4
	w := summaryWorker{l: l, sid: s.st.ID, c: c, agent: ag, req: req,
		timeout: time.Duration(cmp.Or(ag.Spec.Session.LLMTimeoutSeconds, agents.DefaultLLMTimeoutSeconds)) * time.Second}
	// The call starts once what it summarises is committed: a turn_end
	// in the same batch is then durable before any summary of it is.
	l.afterCommit(func(err error) {
		if err != nil || l.sessions[s.st.ID] != s || s.compacting != c {
			return // a failed commit dropped the session, and its compaction
		}
		l.wg.Add(1)
		go w.run(l.runCtx)
	})
}

// trimInstead records a trim where a summary was wanted, and tells the
// session why once.
func (l *Loop) trimInstead(s *session, c *compaction, why string) {
	var e Event
	var ok bool
	if c.manual {
		var p cutPlan
		if p, ok = s.st.plan(0); ok {
			e = s.st.compactionEvent(p, CompactTrim, s.st.Summary)
		}
	} else {
		e, ok = s.st.trimEvent(cmp.Or(s.budget, 1))
	}
	if !ok {
		l.endCompaction(s, c, CompactResult{Method: CompactNone, TokensBefore: s.st.HistTokens, TokensAfter: s.st.HistTokens})
		return
	}
	l.log.Info("history trimmed without a summary", "session", s.st.ID, "why", why)
	l.record(s, e)
	if !s.st.TrimNoticed {
		l.record(s, Event{Type: EvError, Code: CodeHistoryTrimmed, Content: "the conversation outgrew max_history_tokens and could not be summarised (" +
			why + "): older messages are no longer sent to the model, they stay in the session's log"})
	}
	l.endCompaction(s, c, resultOf(&e))
}

func resultOf(e *Event) CompactResult {
	c := e.Compaction
	return CompactResult{Method: c.Method, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter, CoversTo: c.CoversTo}
}

// endCompaction lets the session's next turn start, and tells a manual
// caller once what was recorded is committed.
func (l *Loop) endCompaction(s *session, c *compaction, res CompactResult) {
	s.compacting = nil
	if res.Method != CompactNone {
		l.log.Info("history compacted", "session", s.st.ID, "agent", s.st.Agent, "method", res.Method,
			"tokens_before", res.TokensBefore, "tokens_after", res.TokensAfter)
	}
	l.want(s)
	if c.done != nil {
		l.afterCommit(func(err error) { c.done(res, err) })
	}
}

// failCompaction ends a compaction whose session is being forgotten.
func failCompaction(s *session, why error) {
	if c := s.compacting; c != nil {
		s.compacting = nil
		if c.done != nil {
			c.done(CompactResult{}, why)
		}
	}
}

// Say is what a chat is told of a manual compaction's result.
func (r CompactResult) Say() string {
	switch r.Method {
	case CompactNone:
		return "Nothing to compact yet: the conversation is a single exchange."
	case CompactTrim:
		return fmt.Sprintf("The older messages could not be summarised, so they were dropped from the agent's context "+
			"(about %d → %d tokens); they stay in the session's log.", r.TokensBefore, r.TokensAfter)
	}
	if r.TokensAfter >= r.TokensBefore {
		return "Summarised the older messages; the conversation is still short, so the summary saves no room yet. " +
			"The messages stay in the session's log."
	}
	return fmt.Sprintf("Summarised the older messages (about %d → %d tokens of context); they stay in the session's log.",
		r.TokensBefore, r.TokensAfter)
}

// SayCompact is what a chat is told of its /compact: the result's
// sentence, or one for the outcomes a person can act on (the gateway's
// wait ran out while the summary goes on being written, a turn is
// running, the session has ended). ok is false for any other error, which
// the gateway reports as a failure.
func SayCompact(res CompactResult, err error) (say string, ok bool) {
	switch {
	case err == nil:
		return res.Say(), true
	case errors.Is(err, context.DeadlineExceeded):
		return "The conversation is being summarised; your next message will use the summary.", true
	case errors.Is(err, ErrTurnRunning):
		return "The agent is still answering: send /compact again once it has finished.", true
	case errors.Is(err, ErrSessionEnded), errors.Is(err, ErrSessionNotFound):
		return "This conversation has ended: send a message to start a new one.", true
	}
	return "", false
}
