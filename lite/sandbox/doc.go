// Package sandbox is where the daemon's processes run: it turns
// agnx.yaml's sandbox: section into bubblewrap policies (bwrap) for an
// agent's bash and CLI tools (ForAgent), its stdio MCP servers
// (SpawnMCP), its background processes (ForBackground) and the coding
// agents of workers: (ForWorkers). One Manager per daemon probes
// bubblewrap on first use, resolves sandbox.run_as, and marks every
// sandbox it starts with this instance (bwrap.Owner), so that Reap ends
// what a killed instance left running.
//
// It also owns the workspace caps that every writing call checks:
// sandbox.workspace_mb, the 64 MB the disk keeps free, and the database's
// disk reserve (Options.ReserveGone). A sandboxed process can grow no
// file past what they leave when it starts; a tool's command and a worker
// are also stopped when the disk falls under the floor; write_file and
// edit_file refuse (Capped).
//
// # Caveats
//
// A probe the machine was too busy to answer (bwrap.Status.Slow) is not
// kept: that call refuses and the next use probes again. In trust mode
// nothing is isolated and nothing is probed; the first bash or CLI call
// logs a warning.
//
// It imports lite/config (its own section), the clients whose sandboxes
// it makes (lite/mcp, lite/bgproc, lite/workers), and agents, bwrap and
// runtime below; never the root package lite.
package sandbox
