package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// backend is where chat, run and attach send their messages: the running
// daemon over HTTP, or a runtime opened in this process. Both print the
// same.
type backend interface {
	createSession(ctx context.Context, agent string) (runtime.SessionInfo, error)
	session(ctx context.Context, id string) (runtime.SessionInfo, error)
	sessions(ctx context.Context) ([]runtime.SessionInfo, error)
	model(ctx context.Context, agent string) (modelInfo, error)
	// turn sends msg and prints the turn it starts through p, until the
	// turn ends; interrupt cancels the turn.
	turn(ctx context.Context, sid, msg string, p *turnPrinter, interrupt <-chan os.Signal) (outcome, error)
	// post sends msg; its turn is seen through follow.
	post(ctx context.Context, sid, msg string) error
	// follow calls fn with the session's events, the log first, then live
	// ones, until ctx ends.
	follow(ctx context.Context, sid string, fn func(runtime.Event) error) error
	cancel(ctx context.Context, sid string) error
	// compact summarises the session's older messages now.
	compact(ctx context.Context, sid string) (runtime.CompactResult, error)
	approve(ctx context.Context, sid, callID, decision string) error
	// discard removes a session this process started when nothing in it
	// came from a model (runtime.Loop.DiscardUnanswered); it reports
	// whether it did.
	discard(ctx context.Context, sid string) (bool, error)
	close() error
}

// parseDecision reads a user's answer to an approval.
func parseDecision(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "o", "once", "y", "yes", "allow", "allow_once":
		return runtime.AllowOnce, true
	case "a", "always", "allow_always":
		return runtime.AllowAlways, true
	case "d", "n", "no", "deny":
		return runtime.DenyCall, true
	}
	return "", false
}

// approver answers a turn's approvals from the user's input lines, one at
// a time in the order they were asked, until done closes.
func approver(b backend, sid string, lines <-chan string, done <-chan struct{}, errw func(string)) func(runtime.Event) {
	asks := make(chan runtime.Event, 16)
	go func() {
		for {
			select {
			case <-done:
				return
			case e := <-asks:
				answer(b, sid, e, lines, done, errw)
			}
		}
	}()
	return func(e runtime.Event) {
		select {
		case asks <- e:
		default:
			errw("too many approvals at once: answer them with agnx-lite attach " + sid)
		}
	}
}

func answer(b backend, sid string, e runtime.Event, lines <-chan string, done <-chan struct{}, errw func(string)) {
	for {
		select {
		case <-done:
			return
		case l, ok := <-lines:
			if !ok {
				return
			}
			d, ok := parseDecision(l)
			if !ok {
				errw("answer o (allow once), a (always) or d (deny) for " + e.ToolName + " " + oneLine(e.Content))
				continue
			}
			if err := b.approve(context.Background(), sid, e.CallID, d); err != nil {
				errw("error: " + err.Error())
			}
			return
		}
	}
}

// modelInfo is what banners show of an agent's model.
type modelInfo struct{ provider, name, baseURL string }

func (m modelInfo) String() string { return m.provider + " " + m.name + baseURLNote(m.baseURL) }

// Tokens from the environment win over the config's.
const (
	// envAPIToken is the API token the CLI sends to a running daemon; it
	// wins over agnx.yaml's server.api_token.
	envAPIToken = "AGNX_API_TOKEN"
	// envAdminToken is the admin token the CLI sends to a running daemon;
	// it wins over agnx.yaml's server.admin_token.
	envAdminToken = "AGNX_ADMIN_TOKEN"
)

// probeTimeout bounds looking for a daemon on the configured port.
const probeTimeout = 300 * time.Millisecond

// openBackend talks to the daemon at server (-s), else to the daemon the
// config points at, else opens the data dir in this process.
func openBackend(g *globals, server string) (backend, *config.Config, error) {
	cfg, err := g.cfg()
	if err != nil {
		return nil, nil, err
	}
	if url := findDaemon(cfg, server); url != "" {
		return &httpBackend{c: newClient(cfg, url), url: url}, cfg, nil
	}
	if err := ensureInit(g, cfg); err != nil {
		return nil, nil, err
	}
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger(), Progress: g.progress()})
	if err != nil {
		return nil, nil, err
	}
	return &localBackend{app: app}, cfg, nil
}

// findDaemon returns the URL of the daemon to use, or "": server when
// given, else the one serve.json names, else the config's host:port if
// a daemon is ready there and serves this workspace (its /readyz
// workspace_hash, as Agnx's CLI checks).
func findDaemon(cfg *config.Config, server string) string {
	if server != "" {
		return normalizeURL(server)
	}
	if d := config.ReadDaemon(cfg); d != nil {
		return d.URL
	}
	url := configURL(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	c := httpapi.NewClient(url, httpapi.ClientOptions{DialTimeout: probeTimeout})
	hash, err := c.WorkspaceHash(ctx)
	if err != nil || (hash != "" && cfg.DataDir != "" && hash != httpapi.WorkspaceHash(cfg.DataDir)) {
		return ""
	}
	return url
}

// configURL is where the config says the daemon listens, as a client
// reaches it (a wildcard address means this machine).
func configURL(cfg *config.Config) string {
	host := cfg.Server.Host
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::", "[::]":
		host = "::1"
	}
	port := cfg.Server.Port
	if port == 0 {
		port = 8080
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// normalizeURL accepts "host:port" as well as a URL.
func normalizeURL(s string) string {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return strings.TrimRight(s, "/")
	}
	return "http://" + strings.TrimRight(s, "/")
}

func newClient(cfg *config.Config, url string) *httpapi.Client {
	return httpapi.NewClient(url, httpapi.ClientOptions{
		APIToken:   token(envAPIToken, cfg.Server.APIToken),
		AdminToken: token(envAdminToken, cfg.Server.AdminToken),
		SenderID:   cliUser(),
		Gateway:    "cli",
	})
}

func token(env string, s config.Secret) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return s.Value()
}

// startSession continues sessionID, or starts a new CLI session.
func startSession(b backend, cfg *config.Config, agent, sessionID string) (runtime.SessionInfo, error) {
	ctx := context.Background()
	if sessionID != "" {
		info, err := b.session(ctx, sessionID)
		if isSessionNotFound(err) {
			return info, fmt.Errorf("no session %s: list them with \"agnx-lite session list\"", sessionID)
		}
		return info, err
	}
	if agent == "" {
		agent = cfg.Runtime.DefaultAgent
	}
	return b.createSession(ctx, agent)
}

func isSessionNotFound(err error) bool {
	var pe *httpapi.ProblemError
	return errors.Is(err, runtime.ErrSessionNotFound) || (errors.As(err, &pe) && pe.Code == "session_not_found")
}

// latestSession is the newest CLI session with the agent, or "".
func latestSession(b backend, agent string) string {
	list, err := b.sessions(context.Background())
	if err != nil {
		return ""
	}
	for _, s := range list {
		if s.Agent == agent && s.Gateway == "cli" {
			return s.ID
		}
	}
	return ""
}

func cliUser() string {
	if u := os.Getenv("USER"); u != "" {
		return "cli:" + u
	}
	return "cli"
}
