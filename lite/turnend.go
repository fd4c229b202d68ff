package lite

import "github.com/agnx-lite/agnx-lite/runtime"

// onTurnEnd registers h to be told of every turn's end (see
// runtime.TurnEnd): schedules learn how their tasks went, heartbeats
// whether to say anything, notifications which turns nobody watched.
// Register before the loop runs (in Open). Handlers run on the loop
// goroutine: they must not block, only hand the work on.
func (a *App) onTurnEnd(h func(runtime.TurnEnd)) { a.turnEnds = append(a.turnEnds, h) }

func (a *App) turnEnded(te runtime.TurnEnd) {
	for _, h := range a.turnEnds {
		h(te)
	}
}
