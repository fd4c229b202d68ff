#!/usr/bin/env bash
# Installs the reference MCP servers the tests run as real peers
# (@modelcontextprotocol/server-everything and server-filesystem), and the
# reference ACP SDK the ACP tests' agents and clients are written with
# (@agentclientprotocol/sdk), with npm
# into .peers/ (git-ignored), when node and npm are there. Without them, or
# offline, it says so and the tests that need the servers skip with a
# reason. Set MCP_PEERS_DIR to install elsewhere.
set -uo pipefail
# ci: under CI (CI=true) what could not be installed fails the run.
ci() { [ "${CI:-}" = true ] && exit 1; exit 0; }
dir="${MCP_PEERS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.peers}"
# Pinned, so that every run meets the same servers.
pkgs=(@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
  @agentclientprotocol/sdk@2.4.0)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "mcp-peers: node and npm are not installed (sudo apt-get install nodejs npm); the MCP reference-server tests will skip" >&2
  ci
fi
missing=()
for p in "${pkgs[@]}"; do
  grep -qs "\"version\": \"${p##*@}\"" "$dir/node_modules/${p%@*}/package.json" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mkdir -p "$dir" && [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
echo "mcp-peers: installing ${missing[*]} into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${missing[@]}" >&2 ||
  { echo "mcp-peers: npm could not install them; the MCP reference-server tests will skip" >&2; ci; }
exit 0
