// Package doctor is what agnx-lite knows about its own health. It owns
// the checks of `agnx-lite doctor` (Run: config, data dir, database,
// schedules, agents, their model servers and MCP servers, webhooks, the
// sandbox, WASM, the daemon, Telegram, the host facts and the systemd
// unit), the probe `init` and `serve` make of the default agent's model
// server (ProbeAgent), the report behind GET /api/v1/health (Health: the
// checks a running daemon can make without opening its database again,
// and the host facts) and the MCP probe behind `agnx-lite mcp list` and
// `mcp test` (MCPProbe).
//
// Run, ProbeAgent and MCPProbe read the files and ask the servers
// themselves: they run in the CLI, beside a daemon or without one. Health
// runs inside the daemon; what it reads there it declares itself, as
// Agents (the agent cache) and Schedules (the scheduler), and gets them
// with the config and the host-facts reader from NewHealth. It never
// imports the root package.
package doctor
