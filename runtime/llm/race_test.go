//go:build race

package llm

// raceEnabled: the race detector's sync.Pool drops a quarter of what is
// put back, so allocation figures mean nothing under it.
const raceEnabled = true
