package config

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/workers"
)

// Config is agnx.yaml. Each subsystem is handed only its own sub-struct.
// Zero values mean what the field comments say; Default fills in the
// rest.
type Config struct {
	// File is the path the config came from ("" for embedded defaults).
	File string `yaml:"-"`
	// DataDir is the data dir, which holds the database, the agents and
	// their workspaces (Agnx calls it workspace). Empty: ~/.agnx-lite, or
	// .duragent beside an Agnx duragent.yaml; --data-dir and
	// $AGNX_LITE_HOME win over it. A relative path (or ~/) resolves
	// against the config file's folder (Locate does it; Parse keeps
	// paths as written).
	DataDir string `yaml:"workspace"`
	// AgentsDir holds one folder per agent. Empty: <DataDir>/agents, set
	// by Locate once DataDir is known; --agents-dir wins over it.
	AgentsDir string `yaml:"agents_dir"`
	Server    Server `yaml:"server"`
	// Services is Agnx's session storage path, accepted so a
	// duragent.yaml loads unchanged: agnx-lite keeps every session in one
	// database, agnx.db in the data dir; serve and doctor warn when it is
	// set.
	Services Services `yaml:"services"`
	// WorldMemory is where the world memory that every agent's memory
	// tool shares is kept, and how much it may hold.
	WorldMemory WorldMemory `yaml:"world_memory"`
	Sessions    Sessions    `yaml:"sessions"`
	Gateways    Gateways    `yaml:"gateways"`
	// Routes pick the agent for a chat of a gateway (Telegram, a plugin):
	// the first match wins and an empty match matches every chat. With no
	// match the message is dropped, as in Agnx, unless the file sets
	// runtime.default_agent, which then answers; without a file, the
	// default agent answers (RouteFallback).
	Routes  []Route `yaml:"routes"`
	Sandbox Sandbox `yaml:"sandbox"`
	Wasm    Wasm    `yaml:"wasm"`
	Runtime Runtime `yaml:"runtime"`
	Web     Web     `yaml:"web"`
	MCP     MCP     `yaml:"mcp"`
	// Hooks are the inbound webhooks, by name: each answers
	// POST /api/v1/hooks/<name> (hooks.go).
	Hooks map[string]Hook `yaml:"hooks"`
	// Scheduler is how agents' schedules are read and bounded: their time
	// zone, in whose days usage is counted too, and the turns they may
	// start an hour (sched.go).
	Scheduler Scheduler `yaml:"scheduler"`
	// Tasks is when agents are started on the tasks of the task boards
	// (tasks.go).
	Tasks Tasks `yaml:"tasks"`
	// Prices are what models cost, by the name agents give as
	// spec.model.name, for the cost estimates of usage reports and
	// /metrics (usage.go); a model without one is shown unpriced.
	Prices map[string]Price `yaml:"prices"`
	// Subagents bounds what the agent tool lets one session delegate
	// (subagents.go).
	Subagents Subagents `yaml:"subagents"`
	// Workers are the coding agents (Claude Code, Codex, Gemini CLI, ...)
	// an agent's worker tool runs, by name (workers.go).
	Workers map[string]workers.Entry `yaml:"workers"`

	// RouteFallback is the agent for a chat no route matches: "" (drop the
	// message, as Agnx does) when the file sets no runtime.default_agent,
	// else that agent. Without a file it is the default agent.
	RouteFallback string `yaml:"-"`

	// Warnings are the keys the file has that agnx-lite does not know
	// (ignored, as Agnx does) and the Agnx keys it accepts but handles
	// its own way, one sentence each; serve logs them once and doctor
	// shows them.
	Warnings []string `yaml:"-"`

	doc     *agents.Doc // where each key was, for Validate; nil for defaults
	missing bool        // File does not exist (a duragent.yaml): defaults
}

// Server is the HTTP API.
type Server struct {
	// Host is the address the server listens on (default 127.0.0.1, this
	// machine only; 0.0.0.0 for every interface); serve --host wins.
	Host string `yaml:"host"`
	// Port is the port it listens on, 1..65535 (default 8080); serve -p
	// wins.
	Port int `yaml:"port"`
	// RequestTimeoutSeconds bounds a non-streaming request (default 300;
	// 0: none). IdleTimeoutSeconds closes idle keep-alive connections
	// (default 10; 0: none); a full server closes idle ones sooner.
	RequestTimeoutSeconds int `yaml:"request_timeout_seconds"`
	IdleTimeoutSeconds    int `yaml:"idle_timeout_seconds"`
	// KeepAliveIntervalSeconds is how often an event stream sends a
	// keep-alive comment (default 15; 0: never).
	KeepAliveIntervalSeconds int `yaml:"keep_alive_interval_seconds"`
	// MaxConnections caps the connections of ordinary requests (default
	// 64; 0: no cap), MaxConnectionsPerClient those of one client address
	// (default 16; 0: no cap), MaxStreams those serving event streams,
	// counted apart (default 128; 0: no cap). Past a cap, the connection
	// idle longest is closed to make room; only when none is idle is a
	// new one refused with 503.
	MaxConnections          int `yaml:"max_connections"`
	MaxConnectionsPerClient int `yaml:"max_connections_per_client"`
	MaxStreams              int `yaml:"max_streams"`
	// AdminToken guards admin endpoints and APIToken the API; empty: no
	// token is asked for (local clients only). When the server can be
	// reached from elsewhere (bound beyond loopback, named in
	// AllowedHosts by a name that is not a loopback one, or behind
	// TrustedProxies) each set token must be at least 16 characters and
	// not trivially guessable, and serve refuses to start without an API
	// token (tokenProblem).
	AdminToken Secret `yaml:"admin_token"`
	APIToken   Secret `yaml:"api_token"`
	// AllowedHosts are the names clients reach the server by, besides
	// localhost and IP addresses of this machine: a request addressed to
	// any other name is refused (DNS rebinding). E.g. the box's name,
	// pi.local, or a reverse proxy's public name.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// TrustedProxies are the reverse proxies and tunnels in front of the
	// server (addresses or CIDR ranges, e.g. 127.0.0.1 for Caddy or
	// cloudflared on the box): the client address they forward in
	// X-Forwarded-For is believed, for the sign-in throttle and the logs.
	// A request that any proxy forwarded is never served as a local one.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// AllowedOrigins are the web origins (https://app.example) whose pages
	// may call the API, with CORS. Pages from the server itself always
	// may; any other page is refused.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// PublicAgents are the agents the public A2A agent card lists to a
	// caller without a valid token (default none); with one, it lists all.
	PublicAgents []string `yaml:"public_agents"`
}

// Sessions holds defaults for every agent's sessions; an agent's
// spec.session.ttl_hours and .compaction win (lite/upkeep/retention.go).
type Sessions struct {
	// TTLHours ends sessions idle that long (checked hourly); 0: never.
	TTLHours int `yaml:"ttl_hours"`
	// Compaction is discard, archive or disabled: what becomes of events
	// a checkpoint no longer needs; empty: archive (DefaultCompaction).
	Compaction string `yaml:"compaction"`
	// DailyTokenBudget is the daily token budget (input plus output, all
	// its sessions) of an agent whose spec.session.daily_token_budget is
	// 0; 0: none (an agnx-lite extension).
	DailyTokenBudget int `yaml:"daily_token_budget"`
}

// Services is Agnx's services block.
type Services struct {
	Session ServicePath `yaml:"session"`
}

// ServicePath is an Agnx storage location.
type ServicePath struct {
	// Path is where Agnx keeps sessions; agnx-lite does not use it.
	Path string `yaml:"path"`
}

// Gateways lists the gateways besides the HTTP API.
type Gateways struct {
	// Telegram is enabled when its block is present unless it says
	// enabled: false, as in Agnx.
	Telegram Telegram `yaml:"telegram"`
	// Discord is Agnx's built-in Discord gateway, which agnx-lite does not
	// have: accepted and ignored with a warning (use a gateway plugin).
	Discord  *Discord          `yaml:"discord"`
	External []ExternalGateway `yaml:"external"`
}

// ServesChat reports whether a session of gateway and chat is a chat of a
// gateway this file configures (Telegram, a plugin), whose own outbox
// delivers its turns; HTTP and CLI sessions are not.
func (g *Gateways) ServesChat(gateway, chat string) bool {
	if chat == "" || gateway == "" {
		return false
	}
	if gateway == "telegram" {
		return g.Telegram.Enabled
	}
	for _, e := range g.External {
		if e.Name == gateway {
			return true
		}
	}
	return false
}

// Discord is read only to be reported as ignored.
type Discord struct {
	// Enabled and BotToken are Agnx's keys, read only so that the block
	// loads.
	Enabled  *bool  `yaml:"enabled"`
	BotToken Secret `yaml:"bot_token"`
}

// Telegram is the built-in Telegram gateway.
type Telegram struct {
	// Enabled turns the gateway on. In a file that has a telegram block
	// and does not say, it is true, as in Agnx.
	Enabled bool `yaml:"enabled"`
	// BotToken is the bot's token from @BotFather; required when Enabled.
	BotToken Secret `yaml:"bot_token"`
	// Allowlist holds the Telegram user ids allowed to talk to the bot;
	// empty: nobody (deny by default: the bot tells a sender their id and
	// how to add it). The agents' spec.access applies on top.
	Allowlist []int64 `yaml:"allowlist"`
	// APIBaseURL replaces the Bot API's address, e.g. for a local Bot
	// API server or a test fake (agnx-lite extension).
	APIBaseURL string `yaml:"api_base_url"`
}

// ExternalGateway is a gateway plugin: a child process speaking the
// gateway plugin protocol on stdin/stdout.
type ExternalGateway struct {
	// Name is the gateway's name, which routes and hook targets use
	// (letters, digits and hyphens; required, and not telegram while the
	// built-in gateway is on).
	Name string `yaml:"name"`
	// Command is the plugin's program (required); Args its arguments.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	// Env is added to the plugin's environment. Values are secrets as they
	// usually carry tokens.
	Env map[string]Secret `yaml:"env"`
	// Restart is always, on_failure (default) or never.
	Restart string `yaml:"restart"`
}

// Route sends the chats that Match selects to Agent.
type Route struct {
	// Match selects the chats; match: {} selects every chat.
	Match RouteMatch `yaml:"match"`
	// Agent is the agent that answers them (required).
	Agent string `yaml:"agent"`
}

// RouteMatch selects chats; an empty field matches anything.
type RouteMatch struct {
	// Gateway is the gateway's name: telegram, or a plugin's (any case).
	Gateway string `yaml:"gateway"`
	// ChatType is dm (or private: a direct message), group, supergroup
	// or channel (any case).
	ChatType string `yaml:"chat_type"`
	// ChatID and SenderID are the chat's and the sender's ids on the
	// gateway, as written.
	ChatID   string `yaml:"chat_id"`
	SenderID string `yaml:"sender_id"`
}

// Sandbox says how tools run.
type Sandbox struct {
	// Mode is bwrap (default: tools run inside bubblewrap; Agnx's
	// bubblewrap means the same) or trust (tools run as the agnx-lite
	// user, unconfined). Agnx's docker is refused.
	Mode string `yaml:"mode"`
	// RunAs is who sandboxed commands run as when agnx-lite runs as root
	// (root is exempt from the process limit): a user name or uid:gid;
	// empty means nobody (65534:65534). A daemon that is not root runs
	// them as its own user and ignores it.
	RunAs string `yaml:"run_as"`
	// TmpMB caps each sandbox's private /tmp, which lives in RAM (default
	// 64). WorkspaceMB caps each agent's workspace on disk (default 1024;
	// 0: no cap): past it, and when the workspace's disk has less than
	// 64 MB free, sandboxed commands can grow no file (deleting works)
	// and write_file and edit_file refuse.
	TmpMB       int `yaml:"tmp_mb"`
	WorkspaceMB int `yaml:"workspace_mb"`
	// NetworkHelper connects the network of a tool with network: true:
	// auto (default: slirp4netns where installed, else pasta),
	// slirp4netns or pasta. auto prefers slirp4netns as the lighter:
	// about 3 MB and 60 ms per network sandbox against pasta's 21 MB and
	// 160 ms, which counts on a 512 MB board.
	NetworkHelper string `yaml:"network_helper"`
	// Env is the environment WASM tools pick their manifest's env: names
	// from, with the daemon's TZ, LANG and LC_ALL; the daemon's own
	// environment is never offered (a manifest may come with an imported
	// agent, and a tool's output goes to the model). Values may use
	// ${VAR} and are secrets: they never reach a log.
	Env map[string]Secret `yaml:"env"`
}

// MCP is how MCP servers live, and the servers every agent gets (an
// agnx-lite extension; agents declare theirs in spec.tools, type: mcp).
type MCP struct {
	// IdleTimeoutSeconds stops a server no call used for that long
	// (default 300; an entry's idle_timeout_seconds wins);
	// CallTimeoutSeconds bounds one tool call (default 60; an entry's
	// timeout_seconds wins).
	IdleTimeoutSeconds int `yaml:"idle_timeout_seconds"`
	CallTimeoutSeconds int `yaml:"call_timeout_seconds"`
	// ReadOnly are the host folders an agent's own entries may name in
	// read_only (besides paths inside the agent's folder): agent folders
	// may be imported, so they cannot open the host to their servers.
	ReadOnly []string `yaml:"read_only"`
	// Servers are MCP servers given to every agent; an agent's entry of
	// the same name wins. Their type is mcp or left out, their command a
	// program on PATH or an absolute path, their read_only paths
	// absolute. They are the operator's: their ${env:NAME} may name any
	// variable of the daemon's environment.
	Servers []agents.ToolRef `yaml:"servers"`
}

// Wasm is the WASM tool engine (an agnx-lite extension).
type Wasm struct {
	// Mode is auto (wazero's compiler where it has one, amd64 and arm64;
	// the interpreter elsewhere), compiler or interpreter.
	Mode string `yaml:"mode"`
}

// Runtime holds agnx-lite's own limits (an extension to Agnx).
type Runtime struct {
	// MaxConcurrentTurns is how many turns run at once, across sessions
	// (default 2); the others wait in a queue. A turn waiting for a
	// person's decision holds no slot.
	MaxConcurrentTurns int `yaml:"max_concurrent_turns"`
	// MaxConcurrentTools is how many tool calls run at once (default 4).
	MaxConcurrentTools int `yaml:"max_concurrent_tools"`
	// MaxLoadedAgents is how many built agents stay in memory (default
	// 8): past it, the one used least recently and not in a turn is
	// dropped, and built again when next needed.
	MaxLoadedAgents int `yaml:"max_loaded_agents"`
	// DefaultAgent is the agent the CLI's chat, run, acp and model
	// commands use when given none, and the one init creates (default
	// assistant); set in the file, it also answers the chats no route
	// matches.
	DefaultAgent string `yaml:"default_agent"`
	// MemoryLimitMB is the memory budget the guard keeps under (default
	// 64: an agent with two Go WASM tools holds some 40 MiB compiled,
	// which with the daemon's 16 MiB reserve did not fit in the 40 it
	// was; 0: no guard).
	MemoryLimitMB int `yaml:"memory_limit_mb"`
	// ApprovalTimeoutSeconds is how long a tool call waits for a user's
	// decision before it is denied; 0 (the default) waits until answered,
	// as Agnx does.
	ApprovalTimeoutSeconds int `yaml:"approval_timeout_seconds"`
	// SessionIdleSeconds is how long an idle session stays in memory
	// before it is dropped (and rebuilt from its checkpoint when next
	// used); default 600.
	SessionIdleSeconds int `yaml:"session_idle_seconds"`
	// DBReserveMB is disk space set aside next to the database
	// (agnx.db.reserve) and given up when the disk is full, so messages
	// can still be stored while a workspace on the same disk filled it;
	// while it is gone, tools that write are refused. Default 4; 0: none.
	DBReserveMB int `yaml:"db_reserve_mb"`
}

// maxConfigSize bounds agnx.yaml, which is read whole.
const maxConfigSize = 1 << 20

// Load reads and validates the config file at path. A problem in the
// file is an *agents.Error ("file:line: what is wrong"); a missing file
// wraps fs.ErrNotExist.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	if len(data) > maxConfigSize {
		return nil, &agents.Error{File: path, Msg: fmt.Sprintf("the file is larger than %d KiB", maxConfigSize>>10)}
	}
	return Parse(path, data)
}

// Parse parses and validates data, naming it file in errors. Values
// may use ${VAR}, ${VAR:-default} and $$; keys absent from data keep the
// defaults of Default.
func Parse(file string, data []byte) (*Config, error) {
	doc, err := agents.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	if err := doc.RewriteScalars(func(v string, line int) (string, error) {
		return expandEnv(file, line, v, os.LookupEnv)
	}); err != nil {
		return nil, err
	}
	var seen agnxKeys
	if err := doc.Decode(&seen); err != nil {
		return nil, err
	}
	c := Default()
	if err := doc.Decode(c); err != nil {
		return nil, err
	}
	c.File, c.doc, c.Warnings = file, doc, agents.Warnings(doc)
	c.applyAgnx(&seen)
	for i := range c.Gateways.External {
		if c.Gateways.External[i].Restart == "" {
			c.Gateways.External[i].Restart = "on_failure"
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Seconds turns a value of the file given in seconds into a duration; 0
// means def.
func Seconds(n int, def time.Duration) time.Duration {
	if n == 0 {
		return def
	}
	return time.Duration(n) * time.Second
}
