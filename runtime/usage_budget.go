package runtime

import (
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
	budget := l.dailyBudget(ag)
	if budget == 0 {
		return false
	}
	now := l.now()
	l.usageDay(now)
	today := l.loadToday()
	used := today[s.st.Agent] // a nil map (unreadable rollups) refuses nothing
	if used < int64(budget) {
		return false
	}
	l.log.Info("turn refused: daily token budget used", "session", s.st.ID, "agent", s.st.Agent,
		"used", used, "budget", budget)
	l.record(s, Event{Type: EvError, Code: CodeTokenBudget, Content: budgetNotice(s.st.Agent, used, budget, now, l.opts.Usage.location())})
	l.endTurn(s, TurnFailed)
	return true
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
