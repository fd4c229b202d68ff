package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// DB is what the index needs of the daemon: consistent reads, writes in
// the event loop's group commit, and the sessions' logs. *runtime.Loop
// provides all four.
type DB interface {
	View(fn func(*storage.Tx) error) error
	Commit(ctx context.Context, fn func(*storage.Tx) error) error
	Sessions(ctx context.Context) ([]runtime.SessionInfo, error)
	Events(ctx context.Context, sessionID string, after uint64, fn func(runtime.Event) error) error
}

var _ DB = (*runtime.Loop)(nil)

// IndexOptions configure an Index.
type IndexOptions struct {
	// Agent names the agent: its sessions are indexed, and its index is
	// the storage scope "mem/<Agent>".
	Agent string
	// MemoryDir is the agent's memory folder (holding MEMORY.md and
	// daily/); WorldDir the world memory folder. Either may be empty or
	// missing.
	MemoryDir, WorldDir string
	DB                  DB
	// Embedder computes vectors for hybrid search; nil means keyword
	// search only.
	Embedder Embedder
}

// Index is one agent's memory search index: BM25 over the memory files
// and the agent's messages, plus vectors when an Embedder is set. It is
// kept in bbolt and brought up to date by each Search. It is safe for
// concurrent use; searches of one agent run one at a time.
type Index struct {
	o     IndexOptions
	scope string
	mu    sync.Mutex // one sync at a time
}

var _ Searcher = (*Index)(nil)

// NewIndex returns the index of o.Agent. It does no work until the first
// Search.
func NewIndex(o IndexOptions) *Index {
	return &Index{o: o, scope: "mem/" + o.Agent}
}

// maxQuery bounds the query text read, in bytes, and maxQueryTerms the
// distinct terms searched.
const (
	maxQuery      = 4096
	maxQueryTerms = 32
	maxLimit      = 100
)

// Search brings the index up to date, then finds q's best hits.
func (x *Index) Search(ctx context.Context, q Query) (Results, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.sync(ctx); err != nil {
		return Results{}, fmt.Errorf("update the memory index of %s: %w", x.o.Agent, err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, maxLimit)
	text := q.Text
	if len(text) > maxQuery {
		text = text[:maxQuery]
	}
	return x.search(ctx, text, limit)
}
