// Package wasmtools runs agents' WebAssembly tools with wazero. It owns the
// tool manifest (tool.yaml), the process's one wazero runtime with its
// on-disk compilation cache, and the limits each call runs under.
//
// A tool is a WASI preview 1 command module (anything built for wasip1:
// Go with GOOS=wasip1 GOARCH=wasm, Rust for wasm32-wasip1, TinyGo, Zig)
// plus its manifest. [Engine.Load] compiles the module once, when its
// agent loads; [Tool.Run] instantiates it afresh for every call, with the
// call's JSON arguments on stdin and its stdout as the result, so no state
// leaks between calls and calls may run in parallel. [Tool.Close] releases
// the compiled code when the agent is evicted.
//
// # Limits
//
//   - Time: the call's context gets the manifest's timeout and the runtime
//     closes modules when a context is done, so even a loop with no calls
//     out of the guest ends at the deadline.
//   - Memory: wazero fixes a memory ceiling per runtime (at compile time),
//     but tools ask for different memory_mb. Rather than one runtime per
//     distinct limit, the one runtime's ceiling is the largest limit a
//     manifest may set (1 GiB), and each call installs its own memory
//     allocator (wazero's experimental.MemoryAllocator, found through the
//     call's context) that refuses to grow the linear memory past the
//     tool's memory_mb; memory.grow then fails and the guest dies with its
//     own out-of-memory error, reported as such. Load refuses a module
//     whose initial memory is already above its limit. This keeps one
//     runtime, one engine and one copy of each compiled module whatever
//     the limits, and memory is only committed as the guest grows.
//   - Output: stdout past output_kb is counted and discarded, never
//     buffered; only the last 4 KiB of stderr are kept.
//   - Access: WASI preview 1 has no sockets and no host functions are
//     added, so there is no network. The file system is the agent's
//     workspace at /workspace, read-only or read-write, or nothing at all;
//     the environment holds only the variables the manifest lists.
//   - The workspace is an os.Root opened for each call (rootfs.go), not
//     wazero's directory mount, which follows any symlink: links planted
//     by the bash tool, "..", hard links and races cannot take a tool
//     outside the workspace. What stays inside, links included, works.
//
// # Engines
//
// wazero's compiler is used where it exists (amd64, arm64) and its
// interpreter elsewhere (armv6/v7, riscv64); [Options].Mode overrides the
// choice. Compiled code is cached in [Options].CacheDir, so a restart loads
// tools without compiling them again. Nothing happens at New: the runtime
// is built on the first Load.
//
// # Imports
//
// wasmtools imports wazero, runtime (for the Tool and Result types),
// runtime/tools (for the call's workspace override, WorkspaceFor) and
// agents (for the YAML helpers that give "file:line: msg" errors). Since
// runtime imports agents, agents must never import wasmtools: lite loads
// an agent's WASM tools when it builds the agent's tools.
//
// # Caveats
//
// A tool that sleeps does so in naps of at most 10 ms so that its deadline
// can stop it; its clocks are the host's. Go programs compiled to wasip1
// start with a few MiB of memory, so memory_mb below 8 rarely suits them.
package wasmtools
