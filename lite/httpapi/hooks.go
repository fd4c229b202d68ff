package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Inbound webhooks, POST /api/v1/hooks/{name}, are called by other
// servers (GitHub, a CI job, a sensor), not by clients of the API: each
// hook is authenticated by its own secret or token, not server.api_token,
// and the browser checks of edge.go do not apply (a tunnel's Host is
// fine), except that any request a browser marks as coming from a page
// (Origin, Sec-Fetch-Site) is refused: a webhook never does.
//
// The order of the answers is fixed so that nothing is stored for a
// refused request: a page's request 403, a body over Hooks.MaxBody 413,
// then what Hooks.Deliver answers (401, 413, 400, 415, 422, 429, 503...),
// else 200 for a delivery seen before or 202 once the message is durable.
//
// Nothing before authentication tells which hooks exist: an unknown name,
// a disabled hook and a wrong secret or token all get the same 401 with
// HookRefused (Deliver does the same HMAC work for a name it does not
// know), and the body limit read before authentication is the same for
// every name. Only the daemon's log says which it was.

// hooksPrefix is the path of every hook.
const hooksPrefix = "/api/v1/hooks/"

// hookDeliverTimeout bounds Deliver: it waits for one commit.
const hookDeliverTimeout = 30 * time.Second

// Hooks receives inbound webhooks (Options.Hooks).
type Hooks interface {
	// MaxBody is the most any hook takes, in bytes: what is read of a
	// body before Deliver authenticates it, the same for every name.
	MaxBody() int64
	// Deliver authenticates the raw body and its headers by the hook's
	// secret or token, then makes it a message and sends it on. A refusal
	// is a *HookError; every failed authentication, whatever the name,
	// is a 401 with HookRefused.
	Deliver(ctx context.Context, name string, header http.Header, body []byte) (HookReceipt, error)
}

// HookRefused is the one answer to a delivery that is not authenticated:
// the same for an unknown name, a disabled hook, a missing or wrong
// signature and a missing or wrong token, so that a caller cannot list
// the hooks by their answers.
const HookRefused = "the delivery was refused: send it to a hook named in agnx.yaml, with " +
	"X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, keyed by the hook's secret> " +
	"or Authorization: Bearer <the hook's token>"

// HookTooLarge is the answer to a body over limit bytes.
func HookTooLarge(limit int64) string {
	return fmt.Sprintf("the body is larger than %d bytes: send less or raise the hook's max_body_kb", limit)
}

// HookReceipt is what Deliver did with a delivery.
type HookReceipt struct {
	// Status is "accepted" (202: stored, its turn runs next),
	// "duplicate" (200: the delivery id was seen, nothing stored) or
	// "ignored" (200: a ping, nothing stored).
	Status    string `json:"status"`
	SessionID string `json:"session_id,omitempty"`
}

// HookError is a refused delivery: the status to answer and the one
// sentence of the problem's detail.
type HookError struct {
	Status int
	Msg    string
	// RetryAfter, for a 429 or 503, is when to try again.
	RetryAfter time.Duration
}

func (e *HookError) Error() string { return e.Msg }

// hookCodes are the problem codes of the statuses Deliver answers.
var hookCodes = map[int]string{
	http.StatusBadRequest: codeInvalid, http.StatusUnauthorized: codeUnauthorized,
	http.StatusNotFound: codeNotFound, http.StatusConflict: codeSessionEnded,
	http.StatusRequestEntityTooLarge: codeTooLarge, http.StatusUnsupportedMediaType: codeMediaType,
	http.StatusUnprocessableEntity: codeInvalid, http.StatusTooManyRequests: codeTooMany,
	http.StatusServiceUnavailable: codeUnavailable, http.StatusInsufficientStorage: codeInsufficientStorage,
}

// hookRoute reports whether r is for a hook: a POST to hooksPrefix and
// one path segment. Anything else goes through edge as usual.
func hookRoute(r *http.Request) bool {
	name, ok := strings.CutPrefix(r.URL.Path, hooksPrefix)
	return ok && r.Method == http.MethodPost && name != "" && !strings.Contains(name, "/")
}

// hook serves POST /api/v1/hooks/{name}.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" {
		writeProblem(w, r, http.StatusForbidden, codeOrigin, "web pages may not call a webhook: send it from a server")
		return
	}
	name := r.PathValue("name")
	if s.o.Hooks == nil || !validHookName(name) {
		// No hook can have this name: nothing to hide, but the answer is
		// the one every unauthenticated delivery gets.
		s.log.Debug("webhook refused: no hooks, or not a hook name", "remote", r.RemoteAddr)
		writeProblem(w, r, http.StatusUnauthorized, codeUnauthorized, HookRefused)
		return
	}
	limit := s.o.Hooks.MaxBody()
	if r.ContentLength > limit {
		writeProblem(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, HookTooLarge(limit))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeProblem(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, HookTooLarge(limit))
			return
		}
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "the body could not be read: send it again")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), hookDeliverTimeout)
	defer cancel()
	rec, err := s.o.Hooks.Deliver(ctx, name, r.Header, body)
	if err != nil {
		s.hookRefused(w, r, name, err)
		return
	}
	status := http.StatusOK
	if rec.Status == "accepted" {
		status = http.StatusAccepted
	}
	writeJSON(w, status, rec)
}

// hookRefused answers a Deliver error: a *HookError as it says, anything
// else 500 (logged, not shown).
func (s *Server) hookRefused(w http.ResponseWriter, r *http.Request, name string, err error) {
	var he *HookError
	if !errors.As(err, &he) {
		s.log.Error("webhook failed", "hook", name, "err", err)
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, "the delivery could not be stored: see the daemon's log, then send it again")
		return
	}
	code, ok := hookCodes[he.Status]
	if !ok {
		code = codeInternal
	}
	if he.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((he.RetryAfter+time.Second-1)/time.Second)))
	}
	writeProblem(w, r, he.Status, code, he.Msg)
}

// validHookName is hooks' [a-z0-9_-]{1,64}.
func validHookName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
