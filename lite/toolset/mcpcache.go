package toolset

import "strings"

// MCPCacheKey is the key of the loop's KV under which the daemon keeps an
// MCP tool list (the mcp package's cache key, under mcp/): the daemon
// writes there through the loop, and `agnx-lite mcp list` reads there
// from the database file, so both name it here.
func MCPCacheKey(key string) string { return "mcp/" + strings.TrimPrefix(key, "mcp.") }
