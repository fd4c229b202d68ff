package acpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Options tune a server; zero fields mean the defaults.
type Options struct {
	// Agent is the agent of the sessions session/new creates (required).
	Agent string
	// Version is reported as agentInfo.version.
	Version string
	Logger  *slog.Logger
	// MaxLine bounds one JSON-RPC message (default 4 MiB).
	MaxLine int
	// MaxPrompt bounds a prompt's text, embedded resources included
	// (default 1 MiB).
	MaxPrompt int
	// MaxInFlight bounds the client's requests not yet answered (default 64).
	MaxInFlight int
	// MaxSessions bounds the sessions one connection creates or loads
	// (default 256).
	MaxSessions int
	// CancelGrace is how long a cancelled turn may take to end before its
	// prompt is answered cancelled anyway (default 10 s).
	CancelGrace time.Duration
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxLine <= 0 {
		o.MaxLine = 4 << 20
	}
	if o.MaxPrompt <= 0 {
		o.MaxPrompt = 1 << 20
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 64
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 256
	}
	if o.CancelGrace <= 0 {
		o.CancelGrace = 10 * time.Second
	}
}

// Serve speaks ACP with the client on in and out (the agent's stdin and
// stdout) until in ends or ctx does. Nothing but JSON-RPC is written to
// out. Turns running when the client goes away are left to their
// agent's on_disconnect, as for any client that leaves.
func Serve(ctx context.Context, b Backend, in io.Reader, out io.Writer, o Options) error {
	o.defaults()
	if o.Agent == "" {
		return errors.New("no agent to serve: pass one with -a or set runtime.default_agent")
	}
	s := &server{b: b, o: o, log: o.Logger, sessions: make(map[string]*session)}
	lw := &lineWriter{w: out}
	pr, pw := io.Pipe()
	s.conn = acp.NewAgentSideConnection(s, lw, pr)
	s.conn.SetLogger(o.Logger)
	g := &guard{out: lw, maxLine: o.MaxLine, maxFlyin: o.MaxInFlight, log: o.Logger}
	go g.run(in, pw)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
		_ = pr.CloseWithError(ctx.Err())
		<-s.conn.Done()
	}
	s.turns.Wait()
	return nil
}

// server is the ACP agent of one connection.
type server struct {
	b    Backend
	o    Options
	log  *slog.Logger
	conn *acp.AgentSideConnection
	// turns counts the prompts running, for Serve to wait on.
	turns sync.WaitGroup

	mu       sync.Mutex
	sessions map[string]*session // created or loaded on this connection
}

// session is a session the client may prompt.
type session struct {
	id string
	// turn holds a token while a prompt runs: one turn at a time.
	turn chan struct{}
}

var (
	_ acp.Agent       = (*server)(nil)
	_ acp.AgentLoader = (*server)(nil)
)

// ACP error codes besides JSON-RPC's.
const (
	codeInvalidParams = -32602
	codeNotFound      = -32002 // ACP's resource_not_found
)

func reqErr(code int, msg string) *acp.RequestError {
	return &acp.RequestError{Code: code, Message: msg}
}

func (s *server) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	s.log.Info("acp client connected", "protocol_version", p.ProtocolVersion, "client", clientName(p))
	title := "agnx-lite " + s.o.Agent
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true},
		},
		AgentInfo:   &acp.Implementation{Name: "agnx-lite", Title: &title, Version: s.o.Version},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

func clientName(p acp.InitializeRequest) string {
	if p.ClientInfo == nil {
		return ""
	}
	return p.ClientInfo.Name + " " + p.ClientInfo.Version
}

// Authenticate: no method is offered, so there is nothing to do.
func (s *server) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (s *server) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if err := s.room(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	info, err := s.b.CreateSession(ctx, s.o.Agent)
	if err != nil {
		return acp.NewSessionResponse{}, reqErr(codeInternal, err.Error())
	}
	s.add(info.ID)
	s.log.Info("acp session created", "session", info.ID, "agent", info.Agent, "cwd", p.Cwd)
	s.noteMCP(len(p.McpServers))
	return acp.NewSessionResponse{SessionId: acp.SessionId(info.ID)}, nil
}

// noteMCP logs that the client's MCP servers are not used: an agent's
// tools are those of its spec.
func (s *server) noteMCP(n int) {
	if n > 0 {
		s.log.Info("acp client MCP servers ignored: the agent's tools are those its spec lists", "count", n)
	}
}

// LoadSession replays the session's conversation as session/update
// notifications, then answers.
func (s *server) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	sid := string(p.SessionId)
	if _, err := s.b.Session(ctx, sid); err != nil {
		return acp.LoadSessionResponse{}, reqErr(codeNotFound, "no session "+sid+": start one with session/new")
	}
	if err := s.room(); err != nil {
		if s.get(sid) == nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	s.noteMCP(len(p.McpServers))
	r := &replay{s: s, ctx: ctx, sid: p.SessionId}
	if err := s.b.History(ctx, sid, r.event); err != nil {
		return acp.LoadSessionResponse{}, reqErr(codeInternal, err.Error())
	}
	s.add(sid)
	s.log.Info("acp session loaded", "session", sid, "events", r.n)
	return acp.LoadSessionResponse{}, nil
}

func (s *server) room() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) >= s.o.MaxSessions {
		return reqErr(codeInternal, "this connection has too many sessions open: restart the agent to start afresh")
	}
	return nil
}

func (s *server) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[id] == nil {
		s.sessions[id] = &session{id: id, turn: make(chan struct{}, 1)}
	}
}

func (s *server) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// Cancel: the SDK has cancelled the prompt's context already, which
// cancels the turn (see Prompt); nothing more to do.
func (s *server) Cancel(_ context.Context, p acp.CancelNotification) error {
	s.log.Info("acp session cancel", "session", string(p.SessionId))
	return nil
}

func (s *server) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

func (s *server) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (s *server) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (s *server) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (s *server) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

// update sends one session/update notification.
func (s *server) update(ctx context.Context, sid acp.SessionId, u acp.SessionUpdate) error {
	return s.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: u})
}
