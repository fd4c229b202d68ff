package httpapi

import (
	"cmp"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/webaddr"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// Agents is what the API needs of the agent registry.
type Agents interface {
	// List returns the agents defined, in name order; an agent whose files
	// are invalid is listed with Err set.
	List() ([]AgentInfo, error)
	// Get loads one agent; the error says what is wrong with it.
	Get(name string) (*agents.Agent, error)
	// Reload re-reads every loaded agent now and reports each.
	Reload() []AgentInfo
}

// AgentInfo is an agent as listings show it.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Provider    string `json:"provider,omitempty"`
	Model       string `json:"model,omitempty"`
	Err         string `json:"error,omitempty"`
}

// Options configure a Server.
type Options struct {
	Loop   *runtime.Loop
	Agents Agents
	// Version is reported by /version and the agent card.
	Version string
	// Commit and BuildDate are reported by /version; empty: what the
	// binary's build info says, else "unknown".
	Commit, BuildDate string
	// Workspace is the data dir (Agnx's workspace); /readyz reports the
	// SHA-256 of its canonical path, by which a CLI tells whether the
	// daemon serves its workspace.
	Workspace string
	// APIToken guards /api/v1; empty: loopback clients only.
	APIToken string
	// AdminToken guards /api/admin/v1; empty: loopback clients only. It
	// is independent of APIToken, as in Agnx.
	AdminToken string
	// KeepAlive is the SSE keep-alive interval; 0 means 15 s, <0 none.
	KeepAlive time.Duration
	// RequestTimeout bounds a synchronous message; 0 means 300 s.
	RequestTimeout time.Duration
	// MaxBody caps request bodies; 0 means 2 MB.
	MaxBody int64
	// Shutdown is called by POST /api/admin/v1/shutdown.
	Shutdown func()
	// Metrics writes GET /metrics (Prometheus text); nil: 404.
	Metrics func(io.Writer)
	// Gateways, when set, reports each gateway plugin's state for GET
	// /api/admin/v1/status ("gateways").
	Gateways func() map[string]string
	// MCPServers, when set, reports the MCP servers for the status
	// ("mcp_servers"); RSS the daemon's own resident memory ("rss_bytes",
	// the servers' not included).
	MCPServers func() []MCPServer
	RSS        func() int64
	// SearchMemory searches an agent's memory (limit 0: the default); an
	// unknown agent's error matches fs.ErrNotExist, one without memory
	// ErrNoMemory. nil: 404.
	SearchMemory func(ctx context.Context, agent, q string, limit int) (MemoryResults, error)
	// Schedules serves /api/v1/schedules and the status's schedule
	// figures; nil: 404.
	Schedules Schedules
	// Tasks serves /api/v1/tasks (tasks.go); nil: 404.
	Tasks Tasks
	// BaseURL is the server's address as clients reach it, for the agent
	// card ("http://127.0.0.1:8080").
	BaseURL string
	// AllowedHosts are the names, besides loopback ones and the address a
	// connection came in on, that requests may give as Host
	// (server.allowed_hosts): the names clients reach the server by.
	AllowedHosts []string
	// TrustedProxies are the reverse proxies and tunnels (addresses or
	// CIDR ranges, server.trusted_proxies) whose forwarded client address
	// is believed (remote.go): the right-most address of X-Forwarded-For
	// that is not one of them is the client's, for the throttle and the
	// logs. A forwarded request is never local, trusted proxy or not.
	TrustedProxies []string
	// InstanceID names the web UI's sign-in cookie (agnx_web_<id>), so
	// that two daemons reached by one host name, which share cookies
	// whatever their ports, keep theirs apart; "": agnx_web. Letters and
	// digits only.
	InstanceID string
	// AllowedOrigins are the web origins ("https://app.example") whose
	// pages may call the API, with CORS (server.allowed_origins). The
	// server's own origin is always allowed.
	AllowedOrigins []string
	// PublicAgents are the agents the agent card shows to a caller
	// without a valid token (server.public_agents); others see them all.
	PublicAgents []string
	// Hooks receives POST /api/v1/hooks/{name} (hooks.go); nil: 404.
	Hooks Hooks
	// Usage serves GET /api/v1/usage (usage.go); nil: 404.
	Usage Usage
	// UI serves the web UI's files at / and /ui/ (webui.go); nil: 404.
	// Its sign-in cookie authorizes api routes as the API token does.
	UI UI
	// Health gives the daemon's checks for GET /api/v1/health
	// (health_report.go); nil: the report has no checks.
	Health func(ctx context.Context) HealthFacts
	Logger *slog.Logger
}

// Server is the HTTP API. It is an http.Handler.
type Server struct {
	o       Options
	log     *slog.Logger
	mux     *http.ServeMux
	closing chan struct{}
	started time.Time
	// workspaceHash is WorkspaceHash(o.Workspace).
	workspaceHash string
	// shuttingDown is set by the first POST /api/admin/v1/shutdown.
	shuttingDown atomic.Bool
	// hosts and origins are Options' lists, normalized, for edge;
	// proxies is TrustedProxies parsed (remote.go).
	hosts, origins map[string]bool
	proxies        []netip.Prefix
	// oaMu serializes finding or starting an OpenAI caller's session
	// (openai.go).
	oaMu sync.Mutex
	// throttle slows token guessing per client address; refused counts
	// and logs refusals.
	throttle *throttle
	refused  *refusals
	// cookie is the sign-in cookie's name over plain HTTP (webcookie.go).
	cookie string
}

// New returns the API handler.
func New(o Options) *Server {
	if o.KeepAlive == 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 300 * time.Second
	}
	if o.MaxBody == 0 {
		o.MaxBody = 2 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, log: o.Logger, mux: http.NewServeMux(), closing: make(chan struct{}), started: time.Now(),
		hosts: map[string]bool{}, origins: map[string]bool{}, workspaceHash: WorkspaceHash(o.Workspace),
		throttle: newThrottle(), refused: &refusals{log: o.Logger}, cookie: webCookieName(o.InstanceID)}
	if o.Commit == "" || o.BuildDate == "" {
		commit, date := buildInfo()
		s.o.Commit = cmp.Or(o.Commit, commit)
		s.o.BuildDate = cmp.Or(o.BuildDate, date)
	}
	for _, h := range o.AllowedHosts {
		if n := webaddr.NormalizeHost(h); n != "" {
			s.hosts[n] = true
		}
	}
	for _, p := range o.TrustedProxies {
		if n, ok := webaddr.ParseProxy(p); ok {
			s.proxies = append(s.proxies, n)
		}
	}
	for _, h := range o.AllowedOrigins {
		if n := webaddr.NormalizeOrigin(h); n != "" {
			s.origins[n] = true
		}
	}
	for _, rt := range s.routes() {
		s.mux.Handle(rt.pattern, s.guard(rt, rt.h))
	}
	s.mux.HandleFunc("/", s.noRoute)
	return s
}

// access says who may call a route.
type access int

const (
	public access = iota
	api
	admin
	// hook routes authenticate by the hook's own secret (hooks.go).
	hook
	// oaAPI routes take the API token as api routes do, but refuse in
	// OpenAI's error shape (openai.go).
	oaAPI
)

type route struct {
	pattern string
	access  access
	h       http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"GET /{$}", public, s.uiIndex},
		{"GET /ui/{file...}", public, s.uiFile},
		{"POST /ui/signin", public, s.signin},
		{"POST /ui/signout", public, s.signout},
		{"GET /livez", public, s.livez},
		{"GET /readyz", public, s.readyz},
		{"GET /version", public, s.version},
		{"GET /.well-known/agent-card.json", public, s.agentCard},
		{"GET /metrics", api, s.metrics},
		{"GET /api/v1/health", api, s.health},
		{"GET /api/v1/agents", api, s.listAgents},
		{"GET /api/v1/agents/{name}", api, s.getAgent},
		{"GET /api/v1/agents/{name}/memory/search", api, s.searchMemory},
		{"GET /api/v1/schedules", api, s.listSchedules},
		{"GET /api/v1/schedules/{id}", api, s.getSchedule},
		{"DELETE /api/v1/schedules/{id}", api, s.cancelSchedule},
		{"GET /api/v1/tasks", api, s.listTasks},
		{"POST /api/v1/tasks", api, s.addTask},
		{"GET /api/v1/tasks/{board}/{id}", api, s.getTask},
		{"PATCH /api/v1/tasks/{board}/{id}", api, s.patchTask},
		{"GET /api/v1/usage", api, s.getUsage},
		{"GET /api/v1/sessions", api, s.listSessions},
		{"POST /api/v1/sessions", api, s.createSession},
		{"GET /api/v1/sessions/{id}", api, s.getSession},
		{"DELETE /api/v1/sessions/{id}", api, s.deleteSession},
		{"GET /api/v1/sessions/{id}/messages", api, s.listMessages},
		{"POST /api/v1/sessions/{id}/messages", api, s.postMessage},
		{"POST /api/v1/sessions/{id}/stream", api, s.stream},
		{"GET /api/v1/sessions/{id}/events", api, s.events},
		{"GET /api/v1/sessions/{id}/export", api, s.export},
		{"POST /api/v1/sessions/{id}/cancel", api, s.cancel},
		{"POST /api/v1/sessions/{id}/compact", api, s.compact},
		{"POST /api/v1/sessions/{id}/end", api, s.end},
		{"POST /api/v1/sessions/{id}/discard", api, s.discard},
		{"POST /api/v1/sessions/{id}/approve", api, s.approve},
		{"POST /api/v1/hooks/{name}", hook, s.hook},
		{"POST /api/admin/v1/shutdown", admin, s.shutdown},
		{"POST /api/admin/v1/reload-agents", admin, s.reloadAgents},
		{"GET /api/admin/v1/status", admin, s.status},
		{"GET /v1/models", oaAPI, s.oaModels},
		{"POST /v1/chat/completions", oaAPI, s.oaChat},
	}
}

// Routes lists the patterns the server serves ("GET /livez", ...), for
// documentation checks, written as OpenAPI paths are: "GET /" for the
// exact root, "{file}" for a wildcard that takes the rest of the path.
func Routes() []string {
	var out []string
	for _, r := range (&Server{}).routes() {
		p := strings.ReplaceAll(strings.ReplaceAll(r.pattern, "{$}", ""), "...}", "}")
		out = append(out, p)
	}
	return out
}

// noRoute answers 405 with Allow for a known path and another method, 404
// otherwise, as problem+json.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		other := r.Clone(r.Context())
		other.Method = m
		if _, pattern := s.mux.Handler(other); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, r, http.StatusMethodNotAllowed, codeMethodNotAllowed,
			clip(r.Method, 16)+" is not allowed on "+clip(r.URL.Path, 256)+": use "+strings.Join(allow, " or "))
		return
	}
	writeProblem(w, r, http.StatusNotFound, codeNotFound, "no route "+clip(r.Method, 16)+" "+clip(r.URL.Path, 256)+": see docs/openapi.yaml")
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/v1/") {
		// Conversation content is never kept by a browser or a proxy.
		w.Header().Set("Cache-Control", "no-store")
	}
	if hookRoute(r) || s.edge(w, r) {
		s.mux.ServeHTTP(w, r)
	}
}

// Close ends the open event streams, so a graceful shutdown of the HTTP
// server does not wait for them.
func (s *Server) Close() {
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
}

// guard checks who is calling and the path's ids, and caps the body.
func (s *Server) guard(rt route, h http.HandlerFunc) http.Handler {
	a := rt.access
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a == hook {
			h(w, r) // it checks the caller, the name and the body itself
			return
		}
		if a != public {
			if hint, wait := s.authorize(a, r); wait > 0 {
				tooManyGuesses(w, r, a, wait)
				return
			} else if hint != "" {
				refuse(w, r, a, hint)
				return
			}
		}
		if code, msg := badPathValue(rt.pattern, r); msg != "" {
			writeProblem(w, r, http.StatusNotFound, code, msg)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBody)
		h(w, r)
	})
}

// refuse answers a caller authorize refused as Agnx does: 401 with no
// body on /api/v1, 403 "Admin access denied" on admin routes (and the
// OpenAI endpoint 401 in OpenAI's error shape). The hint,
// what to do, goes in WWW-Authenticate's error_description (with
// error="invalid_token" when a token was sent, as RFC 6750 has it).
func refuse(w http.ResponseWriter, r *http.Request, a access, hint string) {
	challenge := `Bearer realm="agnx-lite"`
	if r.Header.Get("Authorization") != "" {
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge+`, error_description="`+hint+`"`)
	if a == oaAPI {
		writeOAError(w, http.StatusUnauthorized, oaInvalidRequest, "invalid_api_key", "", hint)
		return
	}
	if a == admin {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, "Admin access denied")
		return
	}
	w.WriteHeader(http.StatusUnauthorized)
}

// tooManyGuesses answers a token from an address the throttle has locked
// out: 429 with Retry-After, in OpenAI's shape on its endpoint.
func tooManyGuesses(w http.ResponseWriter, r *http.Request, a access, wait time.Duration) {
	secs := int64((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	msg := fmt.Sprintf("too many wrong tokens from your address: wait %d s, then send the right one", secs)
	if a == oaAPI {
		writeOAError(w, http.StatusTooManyRequests, oaRateLimit, "rate_limit_exceeded", "", msg)
		return
	}
	writeProblem(w, r, http.StatusTooManyRequests, codeTooMany, msg)
}

// authorize returns "" when r may call a route of access a, else the
// sentence saying what the caller must do (no quotes or backslashes: it
// goes in a header's quoted string); wait > 0 when the caller's address
// is locked out for guessing (throttle.go). Each token guards its own
// routes: without one, only local clients pass (remote.go: a request a
// proxy forwarded never is one). The web UI's sign-in cookie
// (webcookie.go) stands for the API token on api routes only: never
// admin routes, hooks or the OpenAI endpoint.
func (s *Server) authorize(a access, r *http.Request) (hint string, wait time.Duration) {
	c := s.caller(r)
	if c.viaUntrusted {
		s.refused.note(reasonUntrustedProxy, r, c)
	}
	token, setting := s.o.APIToken, "server.api_token"
	if a == admin {
		token, setting = s.o.AdminToken, "server.admin_token"
	}
	if token == "" {
		if c.local {
			return "", 0
		}
		s.refused.note(reasonNotLocal, r, c)
		if c.forwarded != "" {
			return "this server answers local programs only and a request a proxy forwarded (" + c.forwarded +
				") is not one: set " + setting + " to allow others", 0
		}
		return "this server answers loopback clients only: set " + setting + " to allow others", 0
	}
	now := time.Now()
	if a == api && webCookieValid(r, s.webCookieName(r), token, now) {
		return "", 0
	}
	wrong := "missing or wrong token: send Authorization: Bearer <" + setting + ">"
	auth := r.Header.Get("Authorization")
	if auth == "" {
		s.refused.note(reasonNoToken, r, c)
		return wrong, 0
	}
	// A locked-out address's tokens are not compared: a right one would
	// answer otherwise, and tell the guesser it has won.
	wait, charged := s.throttle.admit(c.addr, now)
	if wait > 0 {
		s.refused.note(reasonThrottled, r, c)
		return wrong, wait
	}
	scheme, got, _ := strings.Cut(auth, " ")
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
		kind := failAPI
		switch a {
		case admin:
			kind = failAdmin
		case oaAPI:
			kind = failOpenAI
		}
		s.wrongToken(kind, r, c, now, charged)
		return wrong, 0
	}
	s.throttle.succeed(c.addr)
	return "", 0
}

// wrongToken counts, logs and throttles a wrong token of kind from c
// (charged: throttle.admit has counted it already).
func (s *Server) wrongToken(kind int, r *http.Request, c caller, now time.Time, charged bool) {
	s.refused.failures[kind].Add(1)
	s.throttle.fail(c.addr, now, charged)
	s.refused.note(reasonWrongToken, r, c)
}
