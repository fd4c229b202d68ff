package main

import "fmt"

// The memory workload: every agent has spec.memory (the memory tool and
// its directive), and two turns in every memTurnEvery use it: one
// remembers a line in the agent's daily file, one recalls with a query,
// which brings the agent's search index up to date with its memory files
// and the new messages of its sessions before it ranks them. The recall
// always finds the turn's own message, so its answer is known.
const memTurnEvery = 20

const memorySpec = "  memory: {backend: filesystem}\n"

var rememberCall = call{`use memory {"action":"remember","content":"gate note: the gate ran"}`, "memory said: Remembered. Written to"}

// memoryCallFor is turn k's memory call, if it has one. Each recall asks
// its own query: the default hook skips a recall a conversation already
// made with the same arguments.
func memoryCallFor(k int) (call, bool) {
	switch k % memTurnEvery {
	case 5:
		return rememberCall, true
	case 15:
		q := fmt.Sprintf("gate note %d", k)
		return call{fmt.Sprintf(`use memory {"action":"recall","query":%q}`, q),
			fmt.Sprintf(`memory said: Memories matching %q (keyword search, best first):`, q)}, true
	}
	return call{}, false
}
