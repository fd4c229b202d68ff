package httpapi

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// MemoryHit is one entry a memory search found.
type MemoryHit struct {
	Source  string    `json:"source"`
	Heading string    `json:"heading,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	Text    string    `json:"text"`
	Score   float64   `json:"score"`
}

// MemoryResults is GET /api/v1/agents/{name}/memory/search.
type MemoryResults struct {
	Hits []MemoryHit `json:"hits"`
	// Mode is keyword or hybrid; Note says why vectors were not used.
	Mode string `json:"mode"`
	Note string `json:"note,omitempty"`
}

// ErrNoMemory marks an agent without spec.memory (409).
var ErrNoMemory = errors.New("the agent has no memory")

// maxMemoryQuery bounds a search's query text.
const maxMemoryQuery = 1024

// searchMemory is a lite extension: the agent's memory bank and past
// sessions searched as its memory tool's recall with a query does.
func (s *Server) searchMemory(w http.ResponseWriter, r *http.Request) {
	if s.o.SearchMemory == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "memory search is not served here")
		return
	}
	name, q := r.PathValue("name"), r.URL.Query().Get("q")
	if q == "" || len(q) > maxMemoryQuery || !utf8.ValidString(q) {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "give the search as ?q=, UTF-8, at most 1024 bytes")
		return
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 50 {
			writeProblem(w, r, http.StatusBadRequest, codeInvalid, "limit must be a number from 1 to 50")
			return
		}
		limit = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
	defer cancel()
	res, err := s.o.SearchMemory(ctx, name, q, limit)
	switch {
	case err == nil:
		if res.Hits == nil {
			res.Hits = []MemoryHit{}
		}
		writeJSON(w, http.StatusOK, res)
	case errors.Is(err, fs.ErrNotExist):
		writeProblem(w, r, http.StatusNotFound, codeAgentNotFound, err.Error())
	case errors.Is(err, ErrNoMemory):
		writeProblem(w, r, http.StatusConflict, codeInvalid, err.Error())
	case ctx.Err() != nil:
		writeProblem(w, r, http.StatusRequestTimeout, codeTimeout, "the search took too long: try again")
	default:
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
	}
}
