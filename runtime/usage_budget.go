package runtime

import (
	"context"
	"fmt"
	"time"
)

// CodeTokenBudget is the code of the error event of a turn refused
// because its agent used its daily token budget.
const CodeTokenBudget = "token_budget"

// dailyBudget is the agent's daily token budget: its own
// spec.session.daily_token_budget, else the loop's default; 0: none.
func (l *Loop) dailyBudget(ag *LoadedAgent) int {
	if b := ag.Spec.Session.DailyTokenBudget; b > 0 {
		return b
	}
	return max(l.opts.Usage.DailyTokenBudget, 0)
}

// refuseOverBudget ends a turn that is about to start while its agent's
// tokens of today (input plus output, every session and model) reached
// its budget, and reports whether it did. The day's totals are in memory,
// so the check costs a map look-up.
func (l *Loop) refuseOverBudget(s *session, ag *LoadedAgent) bool {
	notice, used, budget := l.overBudget(s.st.Agent, ag)
	if notice == "" {
		return false
	}
	l.log.Info("turn refused: daily token budget used", "session", s.st.ID, "agent", s.st.Agent,
		"used", used, "budget", budget)
	l.record(s, Event{Type: EvError, Code: CodeTokenBudget, Content: notice})
	l.endTurn(s, TurnFailed)
	return true
}

// overBudget returns the sentence a turn of agent (built as ag) is
// refused with now, with the tokens it used today and its budget; ""
// when it may start.
func (l *Loop) overBudget(agent string, ag *LoadedAgent) (notice string, used int64, budget int) {
	budget = l.dailyBudget(ag)
	if budget == 0 {
		return "", 0, 0
	}
	now := l.now()
	l.usageDay(now)
	used = l.loadToday()[agent] // a nil map (unreadable rollups) refuses nothing
	if used < int64(budget) {
		return "", used, budget
	}
	return budgetNotice(agent, used, budget, now, l.opts.Usage.location()), used, budget
}

// BudgetRefusal returns the sentence a turn of agent would be refused
// with now because the agent used its daily token budget, or "" when a
// turn may start. Whatever starts turns on its own (a schedule, a
// heartbeat) asks it first, so that a run past the budget is skipped with
// that reason instead of storing a message whose turn is refused. It
// builds the agent when it is not loaded; an agent that cannot be built is
// its error.
func (l *Loop) BudgetRefusal(ctx context.Context, agent string) (string, error) {
	reply := make(chan result[string], 1)
	return call(ctx, l, &budgetReq{agent: agent, reply: reply}, reply)
}

type budgetReq struct {
	agent string
	reply chan result[string]
}

func (r *budgetReq) handle(l *Loop) {
	l.withAgent(r.agent, func(ag *LoadedAgent, err error) {
		if err != nil {
			r.reply <- result[string]{err: err}
			return
		}
		notice, _, _ := l.overBudget(r.agent, ag)
		r.reply <- result[string]{v: notice}
	})
}

// budgetNotice is what the chat is told of a refused turn.
func budgetNotice(agent string, used int64, budget int, now time.Time, loc *time.Location) string {
	return fmt.Sprintf("%s has used its daily token budget (%d of %d tokens): the budget resets at midnight (%s); "+
		"raise spec.session.daily_token_budget to allow more", agent, used, budget, zoneName(now, loc))
}

// zoneName names loc for a person: its IANA name, or for the system's
// zone (whose name is "Local") its abbreviation now.
func zoneName(now time.Time, loc *time.Location) string {
	if n := loc.String(); n != "Local" && n != "" {
		return n
	}
	abbr, _ := now.In(loc).Zone()
	return abbr
}
