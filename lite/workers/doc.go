// Package workers runs coding agents (Claude Code, Codex, Gemini CLI,
// OpenCode, another agnx-lite) as workers of a supervising agent: over
// the Agent Client Protocol or Claude Code's headless CLI, in the
// sandbox, with their permission requests put through the supervising
// agent's policy and approvals, and their work reviewed (approve, reject
// with feedback, retry) before it reaches the workspace.
//
// # Runners
//
// ACPRunner speaks ACP as a client (github.com/coder/acp-go-sdk): the
// agent's permission requests are judged by what they would do, not by
// the kind they declare (which the worker chooses): every command in the
// raw input or a title that is one is a bash call, every path named a
// write_file call (a read_file one only for a read or search that carries
// nothing a write needs), every address a web call, and a request of no
// known kind is also asked as the worker's name. runtime.AskAll puts
// those readings through the supervising agent's policy: one denied
// denies the request, and a person is asked once, about the most
// dangerous reading the policy would ask about. Its file requests are
// confined to the job's folder.
// ClaudeRunner drives `claude -p`, which cannot ask anyone while it runs:
// it gets up front, in --allowedTools, only the tools the policy allows
// without asking (RunnerConfig.Allowed), the read-only ones it would use
// unasked are put in --disallowedTools otherwise, and what it was refused
// (the result's permission_denials) ends its outcome, for the supervisor
// to ask the user about before resuming it.
//
// Both start the worker through a Sandbox (lite/sandbox's bwrap one) with
// only the entry's environment and a home of its own, kill its whole
// process tree before Run returns, and bound what they read from it.
package workers
