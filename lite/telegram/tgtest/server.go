package tgtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the fake's bot token.
const Token = "123456:TEST-fake-token"

// BotID and BotUsername are the fake bot's identity (getMe).
const (
	BotID       = 999
	BotUsername = "agnx_test_bot"
)

// Call is one request the fake received.
type Call struct {
	Method string
	Params map[string]any // the JSON body
}

// Int reads a numeric parameter.
func (c Call) Int(name string) int64 {
	f, _ := c.Params[name].(float64)
	return int64(f)
}

// Str reads a string parameter.
func (c Call) Str(name string) string {
	s, _ := c.Params[name].(string)
	return s
}

// Fault is a way for one call to go wrong.
type Fault struct {
	// When, if set, picks the call the fault applies to.
	When func(Call) bool
	// Code answers {"ok":false,"error_code":Code,"description":Description}
	// with parameters.retry_after when RetryAfter > 0.
	Code        int
	Description string
	RetryAfter  int
	// Hang holds the request until the client gives up; Drop closes the
	// connection without an answer.
	Hang, Drop bool
}

// Common faults.
var (
	Conflict    = Fault{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	BadEntities = Fault{Code: 400, Description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0"}
)

// TooMany is a 429 asking to wait seconds.
func TooMany(seconds int) Fault {
	return Fault{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", seconds), RetryAfter: seconds}
}

// Server is a running fake.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every change
	closing  chan struct{}
	once     sync.Once
	queue    []queued
	nextUpd  int64
	calls    []Call
	chats    map[int64][]*Message
	byID     map[int64]*Message
	nextMsg  int64
	faults   map[string][]Fault
	holds    []*hold
	files    map[string]file
	answered map[string]string // callback query id → text
	slow     time.Duration     // how late every call but getUpdates is answered
}

type queued struct {
	id  int64
	raw json.RawMessage
}

type hold struct {
	when func(Call) bool
	got  chan Call
	done bool
}

type file struct {
	path string
	data []byte
}

// New starts a fake, closed when the test ends.
func New(t testing.TB) *Server {
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a fake without a test (for child processes); the caller
// must Close it.
func NewServer() *Server {
	s := newServer()
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewInProcess returns a fake that listens nowhere: Transport answers
// its requests in the calling goroutine, so it works inside a
// testing/synctest bubble, where network I/O would stop the fake clock.
// Its URL is empty (any base URL reaches it); the caller must Close it.
func NewInProcess() *Server {
	return newServer()
}

func newServer() *Server {
	return &Server{changed: make(chan struct{}), closing: make(chan struct{}), nextUpd: 100, nextMsg: 1,
		chats: map[int64][]*Message{}, byID: map[int64]*Message{}, faults: map[string][]Fault{}, files: map[string]file{},
		answered: map[string]string{}}
}

// Transport answers Bot API requests by calling the fake directly, for an
// http.Client of the gateway under test. A dropped connection (Fault.Drop)
// is an empty answer.
func (s *Server) Transport() http.RoundTripper { return inProcess{s} }

type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	rec := httptest.NewRecorder()
	t.s.serve(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Close ends held and hanging requests, then stops the server.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		if s.Server != nil {
			s.Server.CloseClientConnections()
			s.Server.Close()
		}
	})
}

// Fail queues a fault for the next call of method (that matches f.When).
func (s *Server) Fail(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

// FaultsLeft is how many faults registered for method are still to be
// played.
func (s *Server) FaultsLeft(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.faults[method])
}

// Hold parks the first request matching when (after recording it): it is
// sent on the returned channel and never answered.
func (s *Server) Hold(when func(Call) bool) <-chan Call {
	h := &hold{when: when, got: make(chan Call, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holds = append(s.holds, h)
	return h.got
}

// Slow answers every call but getUpdates d late, as a Telegram far away or
// overloaded does (0: at once). The call is recorded, and its message
// shown, only once it is answered.
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = d
}

// AddFile makes a file downloadable: getFile(fileID) answers path, and
// /file/bot<token>/<path> serves data.
func (s *Server) AddFile(fileID, path string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{path: path, data: data}
}

// notify wakes waiters; s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called under no lock) holds, re-checking at each
// change the fake sees; it fails the test after 10 s.
func (s *Server) Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("tgtest: timed out waiting for %s", what)
		}
	}
}

// Calls returns the calls received so far of the given methods (all when
// none is given), in order.
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+Token+"/"); ok && r.Method == http.MethodGet {
		s.download(w, rest)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+Token+"/")
	if !ok {
		writeErr(w, Fault{Code: 401, Description: "Unauthorized"})
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	c := Call{Method: method, Params: map[string]any{}}
	if len(body) > 0 && json.Unmarshal(body, &c.Params) != nil {
		writeErr(w, Fault{Code: 400, Description: "Bad Request: invalid JSON"})
		return
	}
	if !s.delay(r, c.Method) {
		return
	}
	f, h := s.record(c)
	if h != nil || f.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	if f.Drop {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	if f.Code != 0 {
		writeErr(w, f)
		return
	}
	s.dispatch(w, r, c)
}

// delay waits as Slow says; false means the client gave up meanwhile.
func (s *Server) delay(r *http.Request, method string) bool {
	s.mu.Lock()
	d := s.slow
	s.mu.Unlock()
	if d <= 0 || method == "getUpdates" {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// record keeps the call and picks its fault or hold.
func (s *Server) record(c Call) (Fault, *hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	defer s.notify()
	for _, h := range s.holds {
		if !h.done && h.when(c) {
			h.done = true
			h.got <- c
			return Fault{}, h
		}
	}
	fs := s.faults[c.Method]
	for i, f := range fs {
		if f.When == nil || f.When(c) {
			s.faults[c.Method] = append(fs[:i:i], fs[i+1:]...)
			return f, nil
		}
	}
	return Fault{}, nil
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, c Call) {
	switch c.Method {
	case "getMe":
		writeOK(w, map[string]any{"id": BotID, "is_bot": true, "first_name": "Agnx", "username": BotUsername,
			"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false})
	case "getUpdates":
		s.getUpdates(w, r, c)
	case "sendMessage":
		s.sendMessage(w, c)
	case "editMessageText":
		s.editMessage(w, c)
	case "sendChatAction":
		writeOK(w, true)
	case "answerCallbackQuery":
		s.mu.Lock()
		s.answered[c.Str("callback_query_id")] = c.Str("text")
		s.notify()
		s.mu.Unlock()
		writeOK(w, true)
	case "getFile":
		s.getFile(w, c)
	default:
		writeErr(w, Fault{Code: 404, Description: "Not Found: method not found"})
	}
}

func writeOK(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeErr(w http.ResponseWriter, f Fault) {
	body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
	if f.RetryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": f.RetryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Code)
	json.NewEncoder(w).Encode(body)
}
