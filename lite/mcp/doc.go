// Package mcp is agnx-lite's MCP client, built on the official Go SDK: it
// turns the MCP servers an agent declares (stdio, streamable HTTP, legacy
// SSE) into tools, namespaced by server, and owns each server's life on a
// small machine: the tool list cached in bbolt, the server started on the
// first call of one of its tools, stopped when idle, restarted with
// backoff when it dies, its memory reported. Stdio servers run in the
// bubblewrap sandbox like every other process.
package mcp
