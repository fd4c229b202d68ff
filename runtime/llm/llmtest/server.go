package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Kind selects the wire format a fake speaks.
type Kind string

// The fakes.
const (
	Ollama    Kind = "ollama"
	OpenAI    Kind = "openai"
	Anthropic Kind = "anthropic"
)

// Server is a running fake. Its embedded httptest.Server gives URL and
// CloseClientConnections; use Close from Server, which also ends stalls.
type Server struct {
	*httptest.Server
	Kind Kind
	// Models are what the Ollama fake lists at /api/tags; set them before
	// the first request.
	Models []string

	h         Handler
	mu        sync.Mutex
	reqs      []RecordedRequest
	closing   chan struct{}
	closeOnce sync.Once
}

// NewServer starts a fake of kind answering with h. It needs no
// *testing.T, for use from a main package; the caller must Close it.
func NewServer(kind Kind, h Handler) *Server {
	s := &Server{Kind: kind, h: h, closing: make(chan struct{}), Models: []string{"qwen3:1.7b"}}
	mux := http.NewServeMux()
	switch kind {
	case Ollama:
		mux.HandleFunc("POST /api/chat", s.chat)
		mux.HandleFunc("GET /api/tags", s.tags)
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, 200, map[string]string{"version": "0.12.0"})
		})
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "Ollama is running")
		})
	case OpenAI:
		mux.HandleFunc("POST /v1/chat/completions", s.chat)
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, 200, map[string]any{"object": "list", "data": []any{}})
		})
	case Anthropic:
		mux.HandleFunc("POST /v1/messages", s.chat)
	default:
		panic("llmtest: unknown kind " + string(kind))
	}
	s.Server = httptest.NewServer(mux)
	return s
}

// NewOllama starts an Ollama fake that plays replies in order and is
// closed when the test ends. A request beyond the script fails the test.
func NewOllama(t testing.TB, replies ...Reply) *Server {
	return newT(t, Ollama, scriptT(t, replies))
}

// NewOpenAI starts an OpenAI-compatible fake that plays replies in order
// and is closed when the test ends. A request beyond the script fails the
// test.
func NewOpenAI(t testing.TB, replies ...Reply) *Server {
	return newT(t, OpenAI, scriptT(t, replies))
}

// NewAnthropic starts a Messages API fake that plays replies in order and
// is closed when the test ends. A request beyond the script fails the test.
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return newT(t, Anthropic, scriptT(t, replies))
}

// NewHandler starts a fake of kind answering with h, closed when the test
// ends.
func NewHandler(t testing.TB, kind Kind, h Handler) *Server {
	return newT(t, kind, h)
}

func newT(t testing.TB, kind Kind, h Handler) *Server {
	t.Helper()
	s := NewServer(kind, h)
	t.Cleanup(s.Close)
	return s
}

// BaseURL is what a provider's Options.BaseURL should be: the root for
// Ollama and Anthropic, root + "/v1" for OpenAI.
func (s *Server) BaseURL() string {
	if s.Kind == OpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.reqs...)
}

// Close releases stalled replies, then shuts the server down and waits for
// its handlers. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.Server.Close()
	})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	rec, err := decodeRequest(r, raw)
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	if err != nil {
		s.writeError(w, Reply{Status: 400, ErrorMessage: "llmtest: bad request body: " + err.Error()})
		return
	}
	rep := s.h(rec)
	if rep.Status != 0 && rep.Status != http.StatusOK {
		s.writeError(w, rep)
		return
	}
	var frames [][]byte
	var errFrame []byte
	switch s.Kind {
	case Ollama:
		w.Header().Set("Content-Type", "application/x-ndjson")
		frames, errFrame = ollamaFrames(rec, rep)
	case Anthropic:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		frames, errFrame = anthropicFrames(rec, rep)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		frames, errFrame = openaiFrames(rec, rep)
	}
	s.stream(w, r, frames, rep, errFrame)
}

// stream writes frames one by one, flushing each, and plays the fault.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, frames [][]byte, rep Reply, errFrame []byte) {
	fl, _ := w.(http.Flusher)
	w.WriteHeader(http.StatusOK)
	faultAt := -1
	if rep.Fault != NoFault {
		faultAt = min(max(rep.FaultAfter, 0), len(frames)-1)
	}
	for i, f := range frames {
		if i == faultAt {
			break
		}
		if _, err := w.Write(f); err != nil {
			return
		}
		fl.Flush()
	}
	if faultAt < 0 {
		return
	}
	fl.Flush()
	switch rep.Fault {
	case Stall:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	case Drop:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case StreamError:
		w.Write(errFrame)
	}
}

// writeError answers with rep.Status and a body in the server's shape.
func (s *Server) writeError(w http.ResponseWriter, rep Reply) {
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Body != "" {
		w.WriteHeader(rep.Status)
		io.WriteString(w, rep.Body)
		return
	}
	msg := rep.ErrorMessage
	if msg == "" {
		msg = strings.ToLower(http.StatusText(rep.Status))
	}
	if msg == "" && rep.Status == 529 {
		msg = "Overloaded"
	}
	switch s.Kind {
	case Ollama:
		writeJSON(w, rep.Status, map[string]string{"error": msg})
		return
	case Anthropic:
		writeJSON(w, rep.Status, map[string]any{"type": "error", "error": map[string]string{
			"type": anthropicErrorType(rep.Status), "message": msg}})
		return
	}
	writeJSON(w, rep.Status, map[string]any{"error": map[string]any{
		"message": msg, "type": errorType(rep.Status), "param": nil, "code": nil,
	}})
}

func errorType(status int) string {
	switch {
	case status == 401 || status == 403:
		return "authentication_error"
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// tags answers Ollama's model list, in its shape.
func (s *Server) tags(w http.ResponseWriter, _ *http.Request) {
	models := []map[string]any{}
	for _, m := range s.Models {
		models = append(models, map[string]any{"name": m, "model": m, "modified_at": "2025-01-01T00:00:00Z",
			"size": 1361236789, "digest": "8f68893c685c", "details": map[string]any{
				"format": "gguf", "family": "qwen3", "parameter_size": "2.0B", "quantization_level": "Q4_K_M"}})
	}
	writeJSON(w, 200, map[string]any{"models": models})
}
