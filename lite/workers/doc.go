// Package workers runs coding agents (Claude Code, Codex, Gemini CLI,
// OpenCode, another agnx-lite) as workers of a supervising agent: over
// the Agent Client Protocol or Claude Code's headless CLI, in the
// sandbox, with their permission requests put through the supervising
// agent's policy and approvals, and their work reviewed (approve, reject
// with feedback, retry) before it reaches the workspace.
package workers
