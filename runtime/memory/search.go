package memory

import (
	"context"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Searcher finds memory entries for a query: the index implements it, the
// memory tool and the CLI use it.
type Searcher interface {
	// Search brings the index up to date with what changed (memory files
	// a person or a tool wrote, new messages of the agent's sessions) and
	// returns the best hits for q, best first.
	Search(ctx context.Context, q Query) (Results, error)
}

// Query is one search.
type Query struct {
	Text string
	// Limit is the number of hits wanted; 0 means DefaultLimit.
	Limit int
	// Viewer, when set, is the session that searches: the messages of
	// only the sessions it Sees are found (see runtime.Viewer). Nil finds
	// every session's: the owner's search through the CLI or the API.
	Viewer *runtime.Viewer
}

// DefaultLimit is the number of hits a search returns unless asked.
const DefaultLimit = 8

// Hit is one entry found: a section of a memory file or a message of a
// past session, with where it came from so that an answer can cite it.
type Hit struct {
	// Source is where the entry is: a path relative to the agent's folder
	// (memory/MEMORY.md, memory/daily/2026-11-20.md), world/<topic>.md for
	// world memory, or session <id> for a past conversation.
	Source string
	// Heading is the entry's section heading ("## 14:05"), if any.
	Heading string
	// Date is when the entry was written: the daily file's day and the
	// entry's time, the message's time, or the file's modification time.
	Date time.Time
	// Text is the entry, cut to a bounded length.
	Text  string
	Score float64
}

// Results is what a search found.
type Results struct {
	Hits []Hit
	// Mode is "keyword" or "hybrid" (keyword and vectors).
	Mode string
	// Note says, in one sentence, why a search that could have used
	// vectors did not (the embeddings endpoint failed), else "".
	Note string
}
