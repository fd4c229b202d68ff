// Package upkeep is the daemon's housekeeping beside the event loop: the
// memory guard (Guard), which holds the process to runtime.memory_limit_mb
// by setting the Go heap's soft limit and collector target, evicting idle
// agents and sessions and at worst refusing new turns, and which drops the
// binary's and the database's mapped file pages from the resident set
// (memtrim.go); and retention (Retention), the hourly sweep that ends
// sessions idle past their ttl and moves old events out of the database.
// HeldBytes sizes the sessions the loop keeps in memory from the same
// limit.
//
// Each runs in the background with the shape every service of the daemon
// has: Start(ctx) starts its goroutine or timer, Stop(ctx) stops it and
// waits at most until ctx's deadline. Both are built whole by their
// constructor; nothing is set on them afterwards.
//
// What it needs from above it declares as small interfaces, which the
// composition root lite satisfies: of the loop, its gauges and shedding
// (Shedder) and ending idle sessions (Expirer); of the agent cache,
// evicting idle agents and the code they hold (Agents) and an agent's
// spec (Specs); of the store, its mapped file (Mapper). It imports the
// domain packages (agents, runtime, runtime/hostfacts, runtime/pages,
// runtime/memory, storage) and, of lite, only lite/config for the
// sessions' defaults; lite/layering_test.go holds it to that.
//
// # Caveats
//
// The guard judges the process's anonymous memory, not its whole resident
// set: file pages are the kernel's to take back, and the guard drops them
// itself. It never crashes the daemon for memory: refusing turns is the
// last step, and it takes turns again once under the limit.
package upkeep
