package mcp

import "time"

// Server is one MCP server entry: a {type: mcp} entry of an agent's
// spec.tools, or one of agnx.yaml's mcp.servers (every agent gets those).
type Server struct {
	// Name namespaces the server's tools: the model sees <name>__<tool>,
	// policies match mcp:<name>:<tool>.
	Name string
	// Transport is stdio (Command), http (streamable HTTP at URL) or sse
	// (the legacy HTTP+SSE transport at URL).
	Transport string

	// Command and Args start a stdio server, in the sandbox, with the
	// agent's workspace as its working folder.
	Command string
	Args    []string
	// Env is the server's whole environment besides the sandbox's minimal
	// one: values as given, where ${env:NAME} (or $NAME) takes NAME from
	// the daemon's environment.
	Env map[string]string
	// Network lets a stdio server reach the network (default: none).
	Network bool
	// ReadOnly are more host paths a stdio server may read (where its
	// program lives, e.g. a node_modules folder).
	ReadOnly []string

	// URL is an http or sse server's endpoint; Headers are sent with each
	// request, values expanded as Env's.
	URL     string
	Headers map[string]string

	// IdleTimeout stops a server no call used for that long (0: the
	// manager's default); CallTimeout bounds one tool call.
	IdleTimeout time.Duration
	CallTimeout time.Duration
}

// Stat is what the manager reports of one server, for /metrics, serve
// status and doctor.
type Stat struct {
	Agent  string
	Server string
	// Running is true while its process (or HTTP session) is up.
	Running bool
	PID     int
	// RSS is the resident memory of a stdio server's processes, bytes.
	RSS   int64
	Tools int
	Calls uint64
	// Failures counts calls that failed for the server's sake (it died,
	// hung, or answered garbage), Restarts the starts after the first.
	Failures  uint64
	Restarts  uint64
	LastError string
	StartedAt time.Time
}
