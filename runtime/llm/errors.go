package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// maxErrorBody caps how much of an error response is read.
const maxErrorBody = 64 << 10

// maxDetail caps the server's own words quoted in a user-facing sentence.
const maxDetail = 200

// Server names the peer a Client talks to, for the sentences users read.
type Server struct {
	// Provider is the short name in ProviderError.Provider ("ollama").
	Provider string
	// Name is how sentences call the server ("Ollama",
	// "OpenAI-compatible server").
	Name string
	// BaseURL is shown in sentences so users see which server failed.
	BaseURL string
	// UnreachableHint says how to fix a refused connection, e.g.
	// `start it with "ollama serve"`.
	UnreachableHint string
	// Classify turns a non-2xx status and the server's message into an
	// error; nil means [Server.StatusError]. Providers set it to give
	// specific advice (a missing model, a missing key) and fall back to
	// StatusError for the rest.
	Classify func(status int, msg string) *runtime.ProviderError
}

// Err builds a ProviderError for s.
func (s *Server) Err(kind runtime.ErrorKind, status int, cause error, format string, args ...any) *runtime.ProviderError {
	return &runtime.ProviderError{
		Kind: kind, Provider: s.Provider, Status: status,
		Message: fmt.Sprintf(format, args...), Err: cause,
	}
}

// Where is "<Name> at <BaseURL>", the subject of most error sentences.
func (s *Server) Where() string {
	if s.BaseURL == "" {
		return s.Name
	}
	return s.Name + " at " + s.BaseURL
}

// StatusError is the generic mapping of an HTTP status to an error. msg is
// the server's own message, already extracted (see [ErrorMessage]).
func (s *Server) StatusError(status int, msg string) *runtime.ProviderError {
	cause := fmt.Errorf("http %d: %s", status, msg)
	d := detail(status, msg)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return s.Err(runtime.ErrAuth, status, cause,
			"%s rejected the credentials (%s): check the API key", s.Where(), d)
	case status == http.StatusNotFound:
		return s.Err(runtime.ErrBadRequest, status, cause,
			"%s has no such endpoint (%s): check spec.model.base_url in the agent's agent.yaml", s.Where(), d)
	case status == http.StatusTooManyRequests:
		return s.Err(runtime.ErrRateLimited, status, cause,
			"%s is rate limiting requests (%s): wait a little and try again", s.Where(), d)
	case status >= 500:
		return s.Err(runtime.ErrServer, status, cause,
			"%s failed (%s): try again later or check the server's log", s.Where(), d)
	default:
		return s.Err(runtime.ErrBadRequest, status, cause,
			"%s rejected the request (%s): check spec.model in the agent's agent.yaml", s.Where(), d)
	}
}

func detail(status int, msg string) string {
	if msg == "" {
		return fmt.Sprintf("%d %s", status, http.StatusText(status))
	}
	return fmt.Sprintf("%d: %s", status, msg)
}

// ReadErrorMessage reads at most 64 KiB of an error body and extracts the
// server's message from it (see [ErrorMessage]).
func ReadErrorMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	return ErrorMessage(b)
}

// ErrorMessage extracts a short message from an error body. It knows the
// common JSON shapes: {"error":"..."} (Ollama), {"error":{"message":...}}
// (OpenAI and most compatible servers), {"message":...} and
// {"detail":...}; otherwise it returns the body's first line. The result is
// one line of at most 200 characters.
func ErrorMessage(body []byte) string {
	var p fastjson.Parser
	if v, err := p.ParseBytes(body); err == nil {
		if m := MessageOf(v); m != "" {
			return clip(m)
		}
	}
	body = bytes.TrimSpace(body)
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		body = body[:i]
	}
	return clip(string(body))
}

// MessageOf returns the message of a parsed JSON error value, or "".
func MessageOf(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	if e := v.Get("error"); e != nil {
		switch e.Type() {
		case fastjson.TypeString:
			return string(e.GetStringBytes())
		case fastjson.TypeObject:
			if m := e.GetStringBytes("message"); len(m) > 0 {
				return string(m)
			}
			return string(e.GetStringBytes("type"))
		}
	}
	for _, k := range [...]string{"message", "detail"} {
		if m := v.GetStringBytes(k); len(m) > 0 {
			return string(m)
		}
	}
	return ""
}

// clip makes s one line of at most maxDetail runes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxDetail {
		return s
	}
	r := []rune(s)
	return string(r[:maxDetail]) + "…"
}

// transportError maps an error from http.Client.Do (no response yet) to a
// ProviderError. It reports whether the request can be retried.
func (s *Server) transportError(err error) *runtime.ProviderError {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return s.Err(runtime.ErrUnreachable, 0, err, "cannot reach %s: %s", s.Where(), s.hint())
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return s.Err(runtime.ErrUnreachable, 0, err, "cannot reach %s (%s): %s", s.Where(), dns.Err, s.hint())
	}
	return s.Err(runtime.ErrUnreachable, 0, err,
		"the connection to %s failed before it answered: %s", s.Where(), s.hint())
}

func (s *Server) hint() string {
	if s.UnreachableHint != "" {
		return s.UnreachableHint
	}
	return "check that it is running and that spec.model.base_url in the agent's agent.yaml is right"
}

// Interrupted is the error for a stream that broke off before the answer
// was complete.
func (s *Server) Interrupted(cause error) *runtime.ProviderError {
	return s.Err(runtime.ErrInterrupted, 0, cause,
		"the connection to %s broke off mid-answer: try again", s.Where())
}

// BadResponse is the error for a body the provider could not parse.
func (s *Server) BadResponse(cause error) *runtime.ProviderError {
	return s.Err(runtime.ErrBadResponse, 0, cause,
		"%s sent a reply that could not be read: check that spec.model.base_url points at the right kind of server", s.Where())
}
