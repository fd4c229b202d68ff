package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

// Schedules is what the schedule routes need of the schedule service
// (*sched.Service has it).
type Schedules interface {
	// List returns the agent's schedules ("": every agent's), the active
	// ones only unless all.
	List(ctx context.Context, agent string, all bool) ([]sched.Schedule, error)
	// Get returns a schedule and its run log; sched.ErrNotFound when
	// there is none.
	Get(ctx context.Context, id string) (sched.Schedule, []sched.Run, error)
	// Cancel cancels a schedule of agent ("": any agent's).
	Cancel(ctx context.Context, id, agent string) (sched.Schedule, error)
	// Stats is how many schedules are active and when the next runs.
	Stats() (active int, next time.Time)
}

// codeScheduleNotFound: no schedule has that id (404).
const codeScheduleNotFound = "schedule_not_found"

// noSchedule is the sentence of a 404 for a schedule id.
const noSchedule = "no such schedule: GET /api/v1/schedules?all=true lists them"

// ScheduleDetail is GET /api/v1/schedules/{id}: the schedule and its run
// log, newest run first ("runs" is the schedule's count of them).
type ScheduleDetail struct {
	sched.Schedule
	Log []sched.Run `json:"run_log"`
}

// listSchedules is a lite extension: the schedules, soonest first.
func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	if s.o.Schedules == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "schedules are not served here")
		return
	}
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent != "" && !validAgentName(agent) {
		writeProblem(w, r, http.StatusBadRequest, codeInvalid, "agent must be an agent's name (letters, digits and hyphens)")
		return
	}
	all := false
	if v := q.Get("all"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeProblem(w, r, http.StatusBadRequest, codeInvalid, "all must be true or false")
			return
		}
		all = b
	}
	list, err := s.o.Schedules.List(r.Context(), agent, all)
	if err != nil {
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	if list == nil {
		list = []sched.Schedule{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": list})
}

// getSchedule is a lite extension: one schedule with its run log.
func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) {
	if s.o.Schedules == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "schedules are not served here")
		return
	}
	sc, runs, err := s.o.Schedules.Get(r.Context(), r.PathValue("id"))
	if s.scheduleError(w, r, err) {
		return
	}
	if runs == nil {
		runs = []sched.Run{}
	}
	writeJSON(w, http.StatusOK, ScheduleDetail{Schedule: sc, Log: runs})
}

// cancelSchedule is a lite extension: the schedule is cancelled (kept,
// with its log, as cancelled); 204.
func (s *Server) cancelSchedule(w http.ResponseWriter, r *http.Request) {
	if s.o.Schedules == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "schedules are not served here")
		return
	}
	_, err := s.o.Schedules.Cancel(r.Context(), r.PathValue("id"), "")
	if s.scheduleError(w, r, err) {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// scheduleError answers err, if any, and reports whether it did.
func (s *Server) scheduleError(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, sched.ErrNotFound):
		writeProblem(w, r, http.StatusNotFound, codeScheduleNotFound, noSchedule)
	default:
		s.log.Error("schedule request failed", "path", clip(r.URL.Path, 256), "err", err)
		writeProblem(w, r, http.StatusInternalServerError, codeInternal, err.Error())
	}
	return true
}

// Schedules lists the schedules (a lite extension): agent's ("": all
// agents'), the active ones only unless all.
func (c *Client) Schedules(ctx context.Context, agent string, all bool) ([]sched.Schedule, error) {
	v := url.Values{}
	if agent != "" {
		v.Set("agent", agent)
	}
	if all {
		v.Set("all", "true")
	}
	path := "/api/v1/schedules"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var j struct {
		Schedules []sched.Schedule `json:"schedules"`
	}
	err := c.call(ctx, request{method: "GET", path: path}, &j, false)
	return j.Schedules, err
}

// Schedule reads one schedule and its run log.
func (c *Client) Schedule(ctx context.Context, id string) (ScheduleDetail, error) {
	var d ScheduleDetail
	err := c.call(ctx, request{method: "GET", path: "/api/v1/schedules/" + url.PathEscape(id)}, &d, false)
	return d, err
}

// CancelSchedule cancels a schedule.
func (c *Client) CancelSchedule(ctx context.Context, id string) error {
	return c.call(ctx, request{method: "DELETE", path: "/api/v1/schedules/" + url.PathEscape(id)}, nil, false)
}
