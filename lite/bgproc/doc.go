// Package bgproc runs an agent's background processes: the
// background_process tool (spawn, list, status, log, capture, send_keys,
// write, kill, watch, unwatch) and the Manager behind it.
//
// Every process runs in its agent's sandbox (the wiring's Start, bubblewrap
// unless sandbox.mode is trust), with the sandbox's minimal environment,
// starting in the agent's workspace, or in the call's own folder when it
// has one (a subagent in its parent's workspace: tools.WorkspaceFor; the
// log stays in the agent's workspace). spawn is matched by policies as the
// bash command it runs (runtime.CallInvoked), the other actions as
// builtin background_process:<action>.
//
// Output (stdout and stderr interleaved) goes to a file in the workspace,
// .agnx/processes/<handle>.log, never to memory: one goroutine per running
// process copies it there through a fixed buffer. The file is capped (8
// MiB by default): past the cap, the oldest half is dropped and a marker
// line says how much, so the latest output is always there to read.
//
// The registry (handle, agent, session, command, status, exit code, log)
// lives in the database's index space, written through the loop's group
// commit. Processes die with the daemon (bwrap's --die-with-parent; Close
// kills them all); after a restart a handle the registry still calls
// running reports lost, with the last output its log holds.
//
// A process spawned without wait tells its session when it ends (Options.
// Notify: how, and its last output), as the parent promises; unwatch
// stops that, watch starts it again and may add a pattern (a Go regexp of
// at most 512 bytes, matched against each output line by the copying
// goroutine: no polling) that tells the session once. interval_seconds,
// the parent's silence timeout for tmux screens, is accepted and ignored.
// Every end is also told to Options.OnExit (schedules linked to the
// process are cancelled there). At most 8 processes run per agent, 16 in
// all; a timeout (1800 s by default) or kill sends SIGTERM to everything
// the command started, and SIGKILL to the sandbox 5 s later.
//
// bgproc imports runtime, storage and bwrap; only lite knows it.
//
// # Caveats
//
// In trust mode a process that leaves a child of its own session behind
// (setsid, a daemon) keeps its log open: the handle reports running until
// that child ends or the process is killed or times out. interactive
// processes get a pipe as stdin, not a terminal: programs that insist on
// a tty (full-screen editors, password prompts) do not work.
package bgproc
