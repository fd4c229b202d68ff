// Package hostfacts owns what agnx-lite reads about its own process and
// the machine it runs on: a process's resident memory (the memory guard's
// figure, /metrics, the daemon's line in doctor, an MCP server's tree),
// and the host facts a Raspberry Pi owner looks at — the CPU's
// temperature, the firmware's throttling, the free disk where the data
// lives, memory, the load average.
//
// The figures come from gopsutil, which reads /proc and /sys, except where
// gopsutil has no such figure; each direct read says why it is one: a
// Raspberry Pi's throttling (Throttle), a process's peak (PeakRSS), the
// board's name (Model), mappings with their permissions (Mappings) and
// the kernel's release (Kernel). A Reader's roots (ProcDir, SysDir) stand
// in for /proc and /sys, so tests write fake files instead of depending on
// the machine; the zero Reader reads the machine's, whatever HOST_PROC or
// HOST_SYS say in the environment.
//
// It imports gopsutil, golang.org/x/sys and the standard library, nothing
// of agnx-lite's, and lives under runtime, beside runtime/pages, as the
// lowest place the fixed layout offers: lite, its subsystems (lite/mcp)
// and the bench programs import it from above, and storage or the runtime
// could without a cycle. runtime/pages, which drops mapped file pages,
// reads /proc/self/smaps itself: it needs mapping addresses and inodes
// that no figure here gives.
//
// # Caveats
//
// Linux only, as agnx-lite is. Every read is a few small files or one
// system call: cheap enough for the memory guard's check every 2 s and a
// /metrics scrape, not for a loop.
//
// gopsutil does work at start that agnx-lite would not: its process
// package imports its cpu package, whose init reads /proc/stat twice, and
// its disk package builds a table of filesystem names. Together some
// 0.13 ms, 17 KB and 70 allocations at every start of the binary on
// amd64 (GODEBUG=inittrace=1). Its host package, which would add three
// regular expressions compiled at init, is not imported (Kernel).
package hostfacts
