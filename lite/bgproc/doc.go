// Package bgproc runs an agent's background processes: the
// background_process tool (spawn, list, status, log, capture, send_keys,
// write, kill, watch, unwatch) and the Manager behind it.
//
// Every process runs in its agent's sandbox (the wiring's Start, bubblewrap
// unless sandbox.mode is trust), with the sandbox's minimal environment,
// starting in the agent's workspace. spawn is matched by policies as the
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
