package agents

import (
	"strings"
	"sync/atomic"
	"time"
)

// Agent is one loaded, validated agent. It is immutable once loaded: the
// runtime shares it between goroutines without locks.
type Agent struct {
	// Name is metadata.name (letters, digits, hyphens).
	Name        string
	Description string
	Version     string
	// Labels is metadata.labels; nil when absent.
	Labels map[string]string
	// APIVersion is agnx/v1alpha1 or duragent/v1alpha1, as written.
	APIVersion string
	// Dir is the agent's folder; relative paths in agent.yaml resolve
	// against it.
	Dir string
	// Workspace is the directory the agent's file tools work in. The loader
	// leaves it empty; the composition root sets it.
	Workspace string

	Model   Model
	Session Session
	Access  Access
	Memory  Memory
	Tools   []ToolRef
	// SkillsDir is spec.skills_dir resolved against Dir; Dir/skills when
	// unset. It may not exist.
	SkillsDir string
	// Hooks is spec.hooks as written (validated); the runtime adds the
	// default hooks of the builtins the agent lists.
	Hooks Hooks
	// Heartbeat is the agent's periodic turn: spec.heartbeat, or
	// HEARTBEAT.md in Dir alone; nil when it has none.
	Heartbeat *Heartbeat
	// Notify is spec.notify (an extension): when and where the agent's
	// notifications go.
	Notify NotifySettings

	// Skills are the usable skills of SkillsDir, by folder name, then the
	// shared ones the composition root adds (AddSharedSkills).
	Skills []Skill
	// SkillProblems are the skills left out and why, and problems with a
	// skills folder, each "file:line: what is wrong"; Warnings has them
	// too. "agnx-lite skill validate" prints them.
	SkillProblems []*Error
	// Directives are the agent's own directive files (<Dir>/directives).
	Directives []Directive
	// SharedDirectives are the data dir's directive files, shared by every
	// agent; they come before Directives. The loader leaves them empty;
	// the composition root sets them (LoadDirectives).
	SharedDirectives []Directive

	// Soul, SystemPrompt and Instructions are the raw texts of the prompt
	// files (templates not yet rendered).
	Soul         string
	SystemPrompt string
	Instructions string

	// Files are the agent's folder, its agent.yaml and the prompt files
	// that were read: what a loader stats to tell whether to reload. The
	// folder is there because its time changes when a conventional prompt
	// file (SOUL.md, ...) is added or removed.
	Files []string
	// ModTime is the newest modification time among Files.
	ModTime time.Time
	// Warnings are what is odd but not wrong, one sentence each: keys the
	// format does not have (Agnx ignores them, so does Load), a prompt
	// file named but missing, a skill or directive left out. validate and
	// doctor show them; serve logs them when it loads the agent.
	Warnings []string
	// toolLines are the lines of agent.yaml naming each of Tools (see
	// ToolLine).
	toolLines []int

	// system holds the last RenderSystem result (a *renderedSystem); a
	// copy of the Agent does not use the original's (see RenderSystem).
	// An atomic.Value, not an atomic.Pointer, as Agents are copied by
	// value (variants, table tests), which the latter's noCopy forbids.
	system atomic.Value
}

// Model is spec.model.
type Model struct {
	// Provider is ollama, openai, anthropic or openrouter (required).
	Provider string `yaml:"provider"`
	// Name is the model as the provider names it, e.g. qwen3:1.7b or
	// gpt-4o-mini (required).
	Name string `yaml:"name"`
	// Temperature is 0..2; nil when agent.yaml has none, and then it is
	// not sent (the model server's default applies).
	Temperature *float64 `yaml:"temperature"`
	// MaxInputTokens is the model's context window, in tokens. 0 when
	// agent.yaml has none: InputTokens then guesses it from the model's
	// name (ContextWindow; 128000 for a name it does not know), and it is
	// not sent to a local server as its context size (Ollama's num_ctx).
	MaxInputTokens int `yaml:"max_input_tokens"`
	// MaxOutputTokens (alias max_tokens) is 0 when agent.yaml has none,
	// and then it is not sent.
	MaxOutputTokens int `yaml:"max_output_tokens"`
	// BaseURL overrides the provider's default endpoint.
	BaseURL string `yaml:"base_url"`
	// KeepAlive is an agnx-lite extension for Ollama's keep_alive.
	KeepAlive string `yaml:"keep_alive"`
}

// Session is spec.session. Load sets the defaults (Default...) of what
// agent.yaml leaves out.
type Session struct {
	// OnDisconnect is what a turn does when the last client following it
	// goes away: pause (stop at its next safe point; the next message
	// goes on from there) or continue (finish in the background).
	OnDisconnect OnDisconnect `yaml:"on_disconnect"`
	// MaxToolIterations bounds the rounds of tool calls in one turn
	// (1..100); past it the model answers once more, without tools.
	MaxToolIterations int `yaml:"max_tool_iterations"`
	// LLMTimeoutSeconds bounds one model call, in seconds (at least 1).
	LLMTimeoutSeconds int `yaml:"llm_timeout_seconds"`
	// TTLHours overrides the config's sessions.ttl_hours (0: sessions
	// never expire); nil when agent.yaml has none.
	TTLHours *int `yaml:"ttl_hours"`
	// Compaction overrides the config's sessions.compaction: discard,
	// archive or disabled; empty when agent.yaml has none.
	Compaction string `yaml:"compaction"`
	// DailyTokenBudget is how many tokens (input plus output, across the
	// agent's sessions and models) it may use a day; a turn that would
	// start past it is refused until midnight. 0: the config's
	// sessions.daily_token_budget, whose 0 means no budget.
	DailyTokenBudget int `yaml:"daily_token_budget"`
	// Context bounds what of the conversation and of tool results the
	// model is sent.
	Context Context `yaml:"context"`
}

// OnDisconnect is spec.session.on_disconnect: what a turn does when the
// last client following it goes away.
type OnDisconnect string

// The values of spec.session.on_disconnect.
const (
	// OnDisconnectPause stops the turn at its next safe point; the next
	// message goes on from there.
	OnDisconnectPause OnDisconnect = "pause"
	// OnDisconnectContinue lets the turn finish in the background.
	OnDisconnectContinue OnDisconnect = "continue"
)

// Context is spec.session.context.
type Context struct {
	// MaxHistoryTokens caps the conversation history a request carries,
	// in tokens (0: no cap but the model's window, less room for the
	// answer and a tenth as a margin; see HistoryBudget).
	MaxHistoryTokens int `yaml:"max_history_tokens"`
	// MaxToolResultTokens caps a tool result as the model sees it, in
	// tokens of about four bytes (at least 1); past it the result is cut.
	MaxToolResultTokens int `yaml:"max_tool_result_tokens"`
	// ToolResultTruncation is what of a cut result is kept: head, tail or
	// both (its start and its end).
	ToolResultTruncation string `yaml:"tool_result_truncation"`
	// ToolResultKeepFirst and ToolResultKeepLast are Agnx's keys (at
	// least 0): read and checked so that its files load, not used here.
	ToolResultKeepFirst int `yaml:"tool_result_keep_first"`
	ToolResultKeepLast  int `yaml:"tool_result_keep_last"`
	// Summarize is context.summarize: when the history outgrows
	// max_history_tokens, the model summarises the older part (true, the
	// default when nil) or it is dropped without a summary (false).
	Summarize *bool `yaml:"summarize"`
}

// Summarizes reports whether the older history is summarised rather than
// dropped (context.summarize, true unless set to false).
func (c *Context) Summarizes() bool { return c.Summarize == nil || *c.Summarize }

// Access is spec.access: who may talk to the agent and how it answers in
// groups. Load fills in the defaults of what agent.yaml leaves out; an
// empty field (an Agent built in code) means the same default. Gateways
// apply it with Admit, Disposition and QueueFor.
type Access struct {
	// DM is who may talk to the agent in direct messages.
	DM AccessRule `yaml:"dm"`
	// Groups is who may talk to it in group chats, and how it answers
	// there.
	Groups GroupAccess `yaml:"groups"`
}

// AccessRule is spec.access.dm.
type AccessRule struct {
	// Policy is open (the default), allowlist or disabled.
	Policy string `yaml:"policy"`
	// Allowlist holds sender ids, exact or "prefix*"; agnx-lite also takes
	// "gateway:sender" (its older form), e.g. "telegram:12345".
	Allowlist []string `yaml:"allowlist"`
}

// GroupAccess is spec.access.groups.
type GroupAccess struct {
	// Policy is open (the default), allowlist or disabled.
	Policy string `yaml:"policy"`
	// Allowlist holds "channel:chat_id" entries, exact or "prefix*", e.g.
	// "telegram:-100123".
	Allowlist []string `yaml:"allowlist"`
	// SenderDefault is what a group member's message does: allow (the
	// default: it may start a turn), passive (stored, no reply), silent
	// (kept as background, not in the conversation) or block (dropped).
	SenderDefault string `yaml:"sender_default"`
	// SenderOverrides maps a sender id (exact or "prefix*") to one of the
	// values of SenderDefault.
	SenderOverrides map[string]string `yaml:"sender_overrides"`
	// Activation is mention (the default: only a message that mentions or
	// replies to the bot starts a turn) or always.
	Activation string `yaml:"activation"`
	// ContextBuffer is what becomes of an allowed group message that does
	// not address the bot in mention mode.
	ContextBuffer ContextBuffer `yaml:"context_buffer"`
	// Queue is what a group's messages do while the agent is answering.
	Queue Queue `yaml:"queue"`
}

// ContextBuffer is spec.access.groups.context_buffer: what becomes of an
// allowed group message that does not address the bot in mention mode.
type ContextBuffer struct {
	// Mode is silent (the default: kept as silent_message events, shown
	// to the model as recent group conversation when it is next addressed)
	// or passive (stored as a user message, no reply).
	Mode string `yaml:"mode"`
	// MaxMessages and MaxAgeHours bound what the model is shown.
	MaxMessages int `yaml:"max_messages"`
	MaxAgeHours int `yaml:"max_age_hours"`
}

// Queue is spec.access.groups.queue: what a chat's messages do while its
// agent is answering.
type Queue struct {
	// Mode is batch (the default: the waiting messages make one next turn),
	// sequential (one turn each) or drop (they are dropped).
	Mode string `yaml:"mode"`
	// MaxPending bounds the waiting messages; Overflow says what a message
	// beyond it does: drop_old (the default), drop_new or reject (the
	// sender is told RejectMessage, when set).
	MaxPending    int    `yaml:"max_pending"`
	Overflow      string `yaml:"overflow"`
	RejectMessage string `yaml:"reject_message"`
	// Debounce merges a sender's rapid messages into one before a turn
	// starts.
	Debounce Debounce `yaml:"debounce"`
}

// Debounce is spec.access.groups.queue.debounce: a sender's rapid
// messages are merged into one before a turn starts.
type Debounce struct {
	// Enabled turns it on; WindowMS is how close, in milliseconds, a
	// sender's next message must follow to be merged.
	Enabled  bool `yaml:"enabled"`
	WindowMS int  `yaml:"window_ms"`
}

// Memory is spec.memory. Its presence turns the memory tool and the
// memory directive on, as in Agnx.
type Memory struct {
	// Backend is filesystem (the default when spec.memory is present, as
	// in Agnx); empty means the agent has no spec.memory.
	Backend string `yaml:"backend"`
	// Embeddings names the embedding model for hybrid (keyword and
	// vector) memory search, a lite extension; unset: keyword search only.
	Embeddings Embeddings `yaml:"embeddings"`
}

// Embeddings is spec.memory.embeddings: the provider's embeddings
// endpoint that memory search computes vectors with.
type Embeddings struct {
	// Provider is ollama, openai or openrouter (EmbeddingProviders);
	// empty: no embeddings.
	Provider string `yaml:"provider"`
	// Model is the embedding model, e.g. nomic-embed-text.
	Model string `yaml:"model"`
	// BaseURL overrides the provider's default, as spec.model.base_url.
	BaseURL string `yaml:"base_url"`
}

// EmbeddingProviders are the providers spec.memory.embeddings may name.
var EmbeddingProviders = []string{"ollama", "openai", "openrouter"}

// ToolLine is the line of agent.yaml that names Tools[i], for an error
// about that entry found after Load (an unknown built-in tool); 0 when it
// is not known (an Agent not made by Load).
func (a *Agent) ToolLine(i int) int {
	if i < 0 || i >= len(a.toolLines) {
		return 0
	}
	return a.toolLines[i]
}

// HasMemory reports whether the agent gets the memory tool and directive:
// spec.memory with the filesystem backend, or, without spec.memory, a
// built-in memory tool listed in spec.tools.
func (a *Agent) HasMemory() bool {
	switch a.Memory.Backend {
	case "filesystem":
		return true
	case "":
		for _, t := range a.Tools {
			if t.Type == "builtin" && IsMemoryTool(t.Name) {
				return true
			}
		}
	}
	return false
}

// IsMemoryTool reports whether a built-in tool name means the memory
// tool: memory, or one of Agnx's older names of its actions.
func IsMemoryTool(name string) bool {
	switch strings.ToLower(name) {
	case "memory", "recall", "remember", "reflect":
		return true
	}
	return false
}

// ToolRef is one entry of spec.tools.
type ToolRef struct {
	// Type is builtin, cli, wasm or mcp.
	Type string `yaml:"type"`
	// Name is the tool's name: a built-in tool's (bash, read_file, web,
	// memory, ...), a cli or wasm tool's own, an MCP server's.
	Name string `yaml:"name"`
	// Command is the executable of a cli tool (or of a stdio MCP server),
	// relative to the agent's folder unless absolute.
	Command string `yaml:"command"`
	// Description tells the model what a cli tool does.
	Description string `yaml:"description"`
	// Readme is a file, relative to the agent's folder, that describes a
	// cli tool further.
	Readme string `yaml:"readme"`

	// Args are extra arguments for Command (agnx-lite extension, mcp).
	Args []string `yaml:"args"`
	// Path is the .wasm module of a wasm tool, relative to the agent's
	// folder (extension).
	Path string `yaml:"path"`
	// URL is the endpoint of an MCP server over HTTP (extension).
	URL string `yaml:"url"`
	// Network lets bash or a cli tool reach the network from its sandbox
	// (extension; default: no network).
	Network bool `yaml:"network"`
	// AllowPrivate lets web (or an MCP server's url) reach loopback,
	// link-local and private addresses (extension; default: refused).
	AllowPrivate bool `yaml:"allow_private"`
	// TimeoutSeconds caps one call of bash, a cli tool or an MCP tool
	// (extension; default 120 for cli, the model's choice up to 600 for
	// bash, agnx.yaml's mcp.call_timeout_seconds for MCP).
	TimeoutSeconds int `yaml:"timeout_seconds"`
	// Input is how a cli tool gets its arguments: empty, Agnx's args
	// string as command-line words, or json, the call's arguments as a
	// JSON object on stdin (extension).
	Input string `yaml:"input"`
	// Env is, for a cli tool, the names of the variables it gets, from
	// the operator's sandbox.env (and TZ, LANG, LC_ALL); nothing else of
	// the daemon's environment reaches it (extension). For an MCP server
	// it maps names to values, which may use ${env:NAME}.
	Env ToolEnv `yaml:"env"`

	// Headers are sent with each request to an http or sse MCP server;
	// values may use ${env:NAME} (extension).
	Headers map[string]string `yaml:"headers"`
	// Transport is an MCP server's: stdio (with command), http (the
	// default with url: streamable HTTP) or sse (the legacy transport).
	Transport string `yaml:"transport"`
	// ReadOnly makes an MCP server's sandbox read more host paths, e.g.
	// the folder its program lives in (extension).
	ReadOnly []string `yaml:"read_only"`
	// IdleTimeoutSeconds stops an MCP server unused for that long (0: the
	// agnx.yaml default, 300).
	IdleTimeoutSeconds int `yaml:"idle_timeout_seconds"`
}
