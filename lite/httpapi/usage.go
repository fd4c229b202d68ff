package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Usage is what GET /api/v1/usage needs of the usage ledger (lite's App
// has it).
type Usage interface {
	// UsageLocation is the time zone the ledger counts days in, which
	// dates in since are read in.
	UsageLocation() *time.Location
	// ReadUsage reports the ledger; it fills in the location and prices.
	ReadUsage(ctx context.Context, q runtime.UsageQuery) (runtime.UsageReport, error)
}

// getUsage is a lite extension: the tokens models used (and their
// estimated cost), by agent, model or day, from since on.
func (s *Server) getUsage(w http.ResponseWriter, r *http.Request) {
	if s.o.Usage == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "usage is not served here")
		return
	}
	q := r.URL.Query()
	uq := runtime.UsageQuery{By: q.Get("by"), Agent: q.Get("agent")}
	switch uq.By {
	case runtime.UsageTotal, runtime.UsageByAgent, runtime.UsageByModel, runtime.UsageByDay:
	default:
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "by must be agent, model or day (or absent for the total)")
		return
	}
	if uq.Agent != "" && !validAgentName(uq.Agent) {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "agent must be an agent's name (letters, digits and hyphens)")
		return
	}
	since, err := runtime.ParseSince(q.Get("since"), time.Now(), s.o.Usage.UsageLocation())
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	uq.Since = since
	rep, err := s.o.Usage.ReadUsage(r.Context(), uq)
	if err != nil {
		s.log.Error("read usage", "err", err)
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, "cannot read the usage ledger: see the daemon's log")
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// Usage reads the daemon's usage report: by is agent, model, day or ""
// (the total alone), since as ParseSince takes it, agent "" for all.
func (c *Client) Usage(ctx context.Context, by, since, agent string) (runtime.UsageReport, error) {
	v := url.Values{}
	for k, val := range map[string]string{"by": by, "since": since, "agent": agent} {
		if val != "" {
			v.Set(k, val)
		}
	}
	path := "/api/v1/usage"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var rep runtime.UsageReport
	err := c.call(ctx, request{method: "GET", path: path}, &rep, false)
	return rep, err
}
