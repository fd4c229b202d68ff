package memory

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// DB is what the index needs of the daemon: consistent reads, writes in
// the event loop's group commit, and the sessions: their ids, one's
// record, its log. *runtime.Loop provides them all.
type DB interface {
	View(fn func(*storage.Tx) error) error
	Commit(ctx context.Context, fn func(*storage.Tx) error) error
	SessionIDs(ctx context.Context) ([]string, error)
	Session(ctx context.Context, id string) (runtime.SessionInfo, error)
	Events(ctx context.Context, sessionID string, after uint64, fn func(runtime.Event) error) error
}

var _ DB = (*runtime.Loop)(nil)

// StoreDB is the DB of a store opened without a loop (the CLI's, when the
// daemon is not running): commits are plain Updates.
func StoreDB(st *storage.Store) DB { return storeDB{st} }

type storeDB struct{ st *storage.Store }

func (d storeDB) View(fn func(*storage.Tx) error) error { return d.st.View(fn) }

func (d storeDB) Commit(_ context.Context, fn func(*storage.Tx) error) error { return d.st.Update(fn) }

func (d storeDB) SessionIDs(context.Context) ([]string, error) {
	var out []string
	err := d.st.View(func(tx *storage.Tx) error {
		return tx.SessionIDs(func(id string) error { out = append(out, id); return nil })
	})
	return out, err
}

func (d storeDB) Session(_ context.Context, id string) (runtime.SessionInfo, error) {
	return runtime.ReadSession(d.st, id)
}

func (d storeDB) Events(_ context.Context, sid string, after uint64, fn func(runtime.Event) error) error {
	return runtime.ReadEvents(d.st, sid, after, fn)
}

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
	// Shared is what the indexes of DB share; nil: this index's own.
	Shared *Shared
}

// Index is one agent's memory search index: BM25 over the memory files
// and the agent's messages, plus vectors when an Embedder is set. It is
// kept in bbolt and brought up to date by each Search. It is safe for
// concurrent use; searches of one agent run one at a time.
type Index struct {
	o     IndexOptions
	scope string
	mu    *sync.Mutex // the agent's: one sync at a time
}

// Shared is what the indexes of one database share: a lock per agent, so
// that two Index values of one agent (a cache that rebuilt the agent, an
// HTTP search beside the tool's) never sync at once, and which agent each
// session belongs to, whom it speaks for and which session spawned it.
// Reading a session's record costs a page of the database (and the
// kernel maps the pages around it too), so each is read once, not at
// every sync of every agent; the cache holds the sessions of the last
// listing. Make one per database with NewShared.
type Shared struct {
	mu     sync.Mutex
	agents map[string]*sync.Mutex // scope → its lock; one small entry per agent ever indexed
	// refs is replaced whole by each listing, never changed in place: a
	// search reads the one it got without the lock.
	refs map[string]runtime.SessionRef // session id → its agent, principal, parent
}

// NewShared returns an empty Shared.
func NewShared() *Shared {
	return &Shared{agents: map[string]*sync.Mutex{}, refs: map[string]runtime.SessionRef{}}
}

func (sh *Shared) lock(scope string) *sync.Mutex {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	mu := sh.agents[scope]
	if mu == nil {
		mu = new(sync.Mutex)
		sh.agents[scope] = mu
	}
	return mu
}

// NewIndex returns the index of o.Agent. It does no work until the first
// Search.
func NewIndex(o IndexOptions) *Index {
	scope := "mem/" + o.Agent
	if o.Shared == nil {
		o.Shared = NewShared()
	}
	return &Index{o: o, scope: scope, mu: o.Shared.lock(scope)}
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
	return x.search(ctx, text, limit, x.visible(q.Viewer))
}

// visible is the filter of the hits a viewer may see: every file's, and
// the messages of the sessions it Sees (runtime.Viewer); nil, every hit,
// for no viewer. It reads the sessions of the listing the sync just made.
func (x *Index) visible(v *runtime.Viewer) func(source string) bool {
	if v == nil {
		return nil
	}
	sh := x.o.Shared
	sh.mu.Lock()
	refs := sh.refs
	sh.mu.Unlock()
	lookup := func(id string) (runtime.SessionRef, bool) { r, ok := refs[id]; return r, ok }
	seen := map[string]bool{}
	return func(source string) bool {
		sid, ok := strings.CutPrefix(source, sessionSource)
		if !ok {
			return true
		}
		ok, known := seen[sid]
		if !known {
			r, found := refs[sid]
			ok = found && v.Sees(r, lookup)
			seen[sid] = ok
		}
		return ok
	}
}
