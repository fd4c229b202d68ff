// Package toolset is the tool factory: it turns an agent's spec.tools into
// the tools its turns call, and is the one place that knows the concrete
// tool types. It owns the built-in tools' wiring (bash, files, web,
// session, memory, skill, schedule, tasks, background_process, worker),
// the cli tools (declared, and discovered in tools/ folders), the WASM
// engine and what a loaded module holds, the MCP glue (entries checked
// against agnx.yaml, the transport that keeps agents' servers off private
// addresses, the manager made on first use) and the Progress a person
// sees while a tool compiles.
//
// A Factory is made once, with everything it uses, by New; the agent
// cache above it calls Build for each agent it builds and Close at the
// end. What it needs from above it declares itself: AgentCache (told that
// an MCP server changed an agent's tool list) and Host (where background
// processes and workers report). It never imports the root package.
package toolset
