// Package storage is agnx-lite's durable state: one bbolt file
// (<data_dir>/agnx.db) holding an append-only event log per session, the
// session checkpoints recovery starts from, the set of sessions with a
// turn in flight, and a small key/value space for gateway cursors,
// schedules and counters.
//
// It stores opaque bytes. The runtime encodes events, session meta and
// checkpoints (JSON) and decides what they mean; storage decides only
// where they live and that nothing acknowledged is lost. It imports bbolt
// and the standard library, nothing else, and no bbolt type appears in its
// API.
//
// Work happens in closures, as in bbolt: Update commits when fn returns
// nil and rolls back on error; View reads a consistent snapshot. A *Tx is
// valid only inside its closure. The runtime's event loop is the only
// writer and does group commit itself: it drains its inbox, calls Update
// once for the batch (one fsync), and acknowledges after Update returns.
//
// # Layout
//
// Bucket and key names are the on-disk contract:
//
//	meta/schema_version         uint64 big-endian; SchemaVersion today
//	sessions/<id>/meta          session meta (the runtime's bytes)
//	sessions/<id>/last_seq      uint64 big-endian; survives PruneEvents
//	sessions/<id>/events/       key: uint64 big-endian seq, value: event
//	sessions/<id>/checkpoints/  key: uint64 big-endian seq, value: state
//	active/<id>                 empty value: session has a turn in flight
//	kv/<key>                    anything
//	index/<scope>/<kind>/<key>  a search index's tables (schema 2)
//
// The index space is opaque too: a scope is one index (the memory bank's
// search index of an agent is "mem/<agent>"), a kind one of its tables,
// written with IndexPut/IndexDelete (IndexAppend for a table keyed by
// time: its pages are filled whole, as events' are), read with
// IndexGet/IndexScan/IndexRange and
// removed whole with DropIndex. It is derived data: Salvage does not copy
// it, and its owner rebuilds what is missing.
// Event seqs start at 1 and are contiguous: AppendEvent accepts only
// LastSeq+1, and PruneEvents removes only a prefix. Open creates the
// layout on a new file, migrates older files forward through a table of
// migrations (one transaction), and refuses files from a newer build.
//
// Open writes <path>.pid while it holds the writer lock, so a second
// process can say who holds the file. Every failure a user can cause at
// Open or commit comes back as one sentence with a typed error:
// *LockedError, *NotWritableError, *DiskFullError, *CorruptError,
// *SchemaError; each matches a sentinel (ErrLocked, ErrNotWritable,
// ErrDiskFull, ErrCorrupt, ErrSchemaTooNew) with errors.Is.
//
// # Caveats
//
// Update holds the writer lock while fn runs. Do slow work (encoding,
// I/O) before calling it, not inside.
//
// Slices passed to callbacks (Events, Sessions) point into the memory map
// and are valid only during the callback; keep a copy if needed. Returned
// slices (Meta, KV, LatestCheckpoint) are already copies.
//
// The file never shrinks: deleted sessions and pruned events free pages
// that later writes reuse. It grows 1 MiB at a time past what it holds
// (bbolt's default step is 16 MiB). Reclaiming disk space takes Compact
// (agnx-lite db compact), with the daemon stopped.
//
// The freelist is not written on commit (NoFreelistSync): Open rebuilds
// it by scanning the file, which costs time proportional to the file size
// on every start. Memory-mapped pages count toward RSS only once touched,
// but a full scan (Check, a big Events replay) touches them.
//
// The lock is flock(2): it is per open file and is not reliable on NFS.
// Two Stores on one path in one process exclude each other like two
// processes do. A stale <path>.pid after a crash is harmless: it is
// overwritten on the next Open and ignored if its process is gone.
//
// bbolt trusts its pages: on a damaged one it panics, at Open in a
// goroutine of its own where no recover reaches, or faults on a page a
// truncated file no longer holds. So Open first walks the page tree with
// plain reads under the file lock (verify.go: every link inside the file,
// each page its own id and type, elements inside their page, keys in
// order, no page linked twice) and refuses a damaged file, an empty one
// included, with *CorruptError before bbolt maps it; on a 16 MiB file the
// walk takes about as long as bbolt's own Open. Update, View, Check and
// Stats then turn a bbolt panic (or a memory fault on the map) raised in
// the caller's goroutine into *CorruptError too, for a file damaged while
// open; a panic that did not start in bbolt is the caller's bug and goes
// on up. The walk checks structure, not the bytes of values. Salvage
// (agnx-lite db recover) copies what is still readable of a damaged file
// into a new one: each session up to its first unreadable event. bbolt
// writes new pages at the end of the file, so a file cut short usually
// loses the list of sessions itself, and with it every session.
//
// With Options.ReserveBytes, Open keeps <path>.reserve allocated (fallocate,
// else zeros) on the database's disk. A commit that finds the disk full
// deletes it and runs its closure again in a new transaction, once, so fn
// given to Update must only do its work on the Tx; ReserveGone then tells
// whatever fills the disk (tools writing into a workspace) to refuse, and
// the reserve is made again after a commit once the disk has room for it
// twice over.
//
// NoSync gives up durability for speed: with it, a power cut may lose or
// damage acknowledged data. Use it in tests and benchmarks only.
package storage
