package config

import "github.com/agnx-lite/agnx-lite/runtime"

// DefaultCompaction is the compaction mode when neither the agent nor
// agnx.yaml names one: old events move to the session's archive file.
const DefaultCompaction = runtime.CompactionArchive

// Default returns the configuration used when there is no agnx.yaml:
// what DefaultYAML says, with File empty. Each call returns a new
// value the caller may change.
func Default() *Config {
	return &Config{
		Server: Server{
			Host:                     "127.0.0.1",
			Port:                     8080,
			RequestTimeoutSeconds:    300,
			IdleTimeoutSeconds:       10,
			KeepAliveIntervalSeconds: 15,
			MaxConnections:           64,
			MaxConnectionsPerClient:  16,
			MaxStreams:               128,
		},
		Sandbox:       Sandbox{Mode: "bwrap", TmpMB: 64, WorkspaceMB: 1024, NetworkHelper: "auto"},
		Wasm:          Wasm{Mode: "auto"},
		MCP:           MCP{IdleTimeoutSeconds: 300, CallTimeoutSeconds: 60},
		RouteFallback: "assistant",
		Runtime: Runtime{
			MaxConcurrentTurns:     2,
			MaxConcurrentTools:     4,
			MaxLoadedAgents:        8,
			DefaultAgent:           "assistant",
			MemoryLimitMB:          64,
			ApprovalTimeoutSeconds: 0,
			SessionIdleSeconds:     600,
			DBReserveMB:            4,
		},
	}
}

// DefaultYAML returns the commented agnx.yaml that init writes. It
// parses to Default (the tests hold it to that).
func DefaultYAML() []byte { return []byte(defaultYAML) }

const defaultYAML = `# agnx-lite configuration. Every key is optional; what is shown is the
# default. Values may use ${VAR} or ${VAR:-default} (the default applies
# when VAR is unset; write $$ for a literal dollar). Agnx's duragent.yaml
# works too: agnx-lite -c duragent.yaml. Provider API keys come from the environment only:
# OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY.
# Check this file with: agnx-lite doctor

# Data dir (database, workspaces, agents). Default: ~/.agnx-lite;
# --data-dir and $AGNX_LITE_HOME win over this key. Relative paths resolve
# against this file's folder.
# workspace: /var/lib/agnx-lite
# agents_dir: /var/lib/agnx-lite/agents     # default: <workspace>/agents

server:
  host: 127.0.0.1                 # 0.0.0.0 to listen on every interface
  port: 8080
  request_timeout_seconds: 300    # 0: no limit
  idle_timeout_seconds: 10         # idle keep-alive connections close
  keep_alive_interval_seconds: 15 # event-stream keep-alive comments
  max_connections: 64             # request connections; 0: no limit
  max_connections_per_client: 16  # of one client address; 0: no limit
  max_streams: 128                # event streams, counted apart; 0: no limit
  # Tokens clients must send; unset: none is asked for and only programs
  # on this machine are served. When others can reach the server (a host
  # other than loopback, a name in allowed_hosts that is not localhost,
  # or trusted_proxies) api_token is required, 16 random characters at
  # least: openssl rand -hex 32
  # admin_token: ${AGNX_ADMIN_TOKEN}
  # api_token: ${AGNX_API_TOKEN}
  # Names clients reach the server by, besides localhost and this
  # machine's addresses (other Host headers are refused: DNS rebinding).
  # allowed_hosts: [pi.local]
  # Reverse proxies and tunnels in front (addresses or CIDR ranges): the
  # client address they forward in X-Forwarded-For counts for the sign-in
  # throttle and the logs. A forwarded request is never served as a
  # local one, trusted or not. See docs/security.md, "Behind a proxy or
  # tunnel".
  # trusted_proxies: [127.0.0.1]
  # Web pages (origins) allowed to call the API; its own pages always are.
  # allowed_origins: ["https://app.example"]
  # Agents the public agent card lists to callers without a token.
  # public_agents: [assistant]

sessions:
  ttl_hours: 0                    # end sessions idle this long (hourly check); 0: never
  # What becomes of events a checkpoint no longer needs: archive (moved to
  # archive/<session>.jsonl.gz, the default), discard, or disabled (kept).
  # An agent's spec.session.ttl_hours and .compaction win over these.
  # compaction: archive
  # daily_token_budget: 0         # tokens (input + output) an agent may use a day; 0: none; an agent's spec.session.daily_token_budget wins

gateways:
  telegram:
    enabled: false
    # bot_token: ${TELEGRAM_BOT_TOKEN}
    # allowlist: [123456789]      # Telegram user ids allowed to talk to the bot; empty: nobody
  # external:                     # gateway plugins (child processes)
  #   - name: discord
  #     command: /usr/local/bin/agnx-discord
  #     args: []
  #     env: {DISCORD_TOKEN: "${DISCORD_TOKEN}"}
  #     restart: on_failure       # always | on_failure | never

# Which agent answers a chat: the first matching route wins; match: {}
# matches every chat. Without a match, runtime.default_agent answers; with
# no runtime.default_agent in this file the message is dropped, as in Agnx.
# routes:
#   - match: {gateway: telegram, chat_type: group}
#     agent: helper
#   - match: {}
#     agent: assistant

sandbox:
  mode: bwrap                     # bwrap | trust (tools run unconfined)
  # run_as: nobody                # when agnx-lite is root: user (or uid:gid) commands run as
  tmp_mb: 64                      # each sandbox's private /tmp (in RAM)
  workspace_mb: 1024              # each agent's workspace on disk; 0: no cap
  network_helper: auto            # auto | slirp4netns | pasta: connects tools with network: true
  # env:                          # the only variables WASM tools' env: may name (besides TZ, LANG, LC_ALL)
  #   GLOSSARY_URL: https://example.org/glossary
  #   WEATHER_API_KEY: ${WEATHER_API_KEY}

wasm:
  mode: auto                      # auto | compiler | interpreter (WASM tools)

# MCP servers. Agents declare theirs in spec.tools (type: mcp); there
# ${env:NAME} may name only variables of sandbox.env above. Stdio servers
# run in the sandbox, started on their first call.
mcp:
  idle_timeout_seconds: 300       # a server no call used for this long is stopped
  call_timeout_seconds: 60        # one tool call
  # read_only: [/opt/mcp]         # host folders agents' own servers may read (read_only:)
  # servers:                      # every agent gets these; an agent's entry of the same name wins
  #   - name: github
  #     command: npx               # a program on PATH or an absolute path
  #     args: [-y, "@modelcontextprotocol/server-github"]
  #     env: {GITHUB_PERSONAL_ACCESS_TOKEN: "${env:GITHUB_TOKEN}"}   # read when the server starts
  #     network: true
  #   - {name: docs, url: "https://mcp.example/mcp", headers: {Authorization: "Bearer ${env:DOCS_TOKEN}"}}

# Schedules agents make (their schedule tool): cron expressions and active
# hours are read in this zone when a schedule names none. Default: the
# system's (TZ, else /etc/localtime). An agent's runs are at least 10 s
# apart, whatever its schedules say.
# scheduler:
#   timezone: Europe/Berlin       # also the day usage reports and token budgets count in
#   max_turns_per_hour: 60        # turns one agent's schedules and heartbeat may start in any hour; past it a run is skipped

# prices:                         # USD per million tokens, for cost estimates in agnx-lite usage
#   claude-sonnet-4-5: {input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75}
#   gpt-4o-mini: {input: 0.15, output: 0.6}   # cache_read/cache_write unset: priced as input

runtime:                          # agnx-lite's own settings
  default_agent: assistant
  max_concurrent_turns: 2
  max_concurrent_tools: 4
  max_loaded_agents: 8
  memory_limit_mb: 64             # memory budget; 0: no guard
  approval_timeout_seconds: 0     # 0: a tool call waits for its approval; N: denied after N s
  session_idle_seconds: 600       # idle sessions leave memory (they come back from disk)
  db_reserve_mb: 4                # disk kept for the database when the disk fills up; 0: none
`
