package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime/sched"
)

const scheduleUsage = "schedule list [--agent A] [--all] | show ID | cancel ID [--json]"

// scheduleTimeout bounds one schedule command.
const scheduleTimeout = 30 * time.Second

// schedules is what the schedule command needs: the running daemon's API,
// or the service of an App opened in this process.
type schedules interface {
	list(ctx context.Context, agent string, all bool) ([]sched.Schedule, error)
	get(ctx context.Context, id string) (sched.Schedule, []sched.Run, error)
	cancel(ctx context.Context, id string) error
}

// runSchedule lists, shows and cancels the schedules agents made.
func runSchedule(g *globals, args []string) error {
	fs := g.flags("schedule")
	agent := fs.String("agent", "", "list: only this agent's schedules")
	all := fs.Bool("all", false, "list: the completed and cancelled ones too")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	sub := fs.Arg(0)
	switch {
	case fs.NArg() == 0:
		return usagef("say what to do: list, show ID or cancel ID")
	case sub == "list" && fs.NArg() != 1:
		return usagef("list takes no words; pick with --agent and --all")
	case sub == "list" && *agent != "" && !agents.ValidName(*agent):
		return usagef("--agent %q is not an agent name", *agent)
	case (sub == "show" || sub == "cancel") && fs.NArg() != 2:
		return usagef("%s needs one schedule id (agnx-lite schedule list shows them)", sub)
	case sub != "list" && sub != "show" && sub != "cancel":
		return usagef("unknown subcommand %q", sub)
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), scheduleTimeout)
	defer cancel()
	s, done, err := openSchedules(g, cfg)
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "list":
		list, err := s.list(ctx, *agent, *all)
		if err != nil {
			return fmt.Errorf("list the schedules: %w", err)
		}
		if *asJSON {
			return printJSON(g.stdout, map[string]any{"schedules": nonNil(list)})
		}
		printSchedules(g.stdout, list, *all)
		return nil
	case "show":
		sc, runs, err := s.get(ctx, fs.Arg(1))
		if err != nil {
			return scheduleErr(fs.Arg(1), err)
		}
		if *asJSON {
			return printJSON(g.stdout, httpapi.ScheduleDetail{Schedule: sc, Log: nonNil(runs)})
		}
		printSchedule(g.stdout, sc, runs)
		return nil
	}
	if err := s.cancel(ctx, fs.Arg(1)); err != nil {
		return scheduleErr(fs.Arg(1), err)
	}
	if *asJSON {
		return printJSON(g.stdout, map[string]any{"cancelled": fs.Arg(1)})
	}
	fmt.Fprintf(g.stdout, "cancelled %s\n", fs.Arg(1))
	return nil
}

// openSchedules reaches the daemon serving this data dir (it holds the
// database), else opens the data dir here; done releases it.
func openSchedules(g *globals, cfg *config.Config) (schedules, func(), error) {
	if url := findDaemon(cfg, ""); url != "" {
		return httpSchedules{newClient(cfg, url)}, func() {}, nil
	}
	app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
	if err != nil {
		return nil, nil, err
	}
	return localSchedules{app.Schedules()}, func() { app.Close() }, nil
}

type httpSchedules struct{ c *httpapi.Client }

func (h httpSchedules) list(ctx context.Context, agent string, all bool) ([]sched.Schedule, error) {
	return h.c.Schedules(ctx, agent, all)
}

func (h httpSchedules) get(ctx context.Context, id string) (sched.Schedule, []sched.Run, error) {
	d, err := h.c.Schedule(ctx, id)
	return d.Schedule, d.Log, err
}

func (h httpSchedules) cancel(ctx context.Context, id string) error {
	return h.c.CancelSchedule(ctx, id)
}

type localSchedules struct{ s *sched.Service }

func (l localSchedules) list(ctx context.Context, agent string, all bool) ([]sched.Schedule, error) {
	return l.s.List(ctx, agent, all)
}

func (l localSchedules) get(ctx context.Context, id string) (sched.Schedule, []sched.Run, error) {
	return l.s.Get(ctx, id)
}

func (l localSchedules) cancel(ctx context.Context, id string) error {
	_, err := l.s.Cancel(ctx, id, "")
	return err
}

// scheduleErr says "no such schedule" the same way for both backends.
func scheduleErr(id string, err error) error {
	var pe *httpapi.ProblemError
	if errors.Is(err, sched.ErrNotFound) || (errors.As(err, &pe) && pe.Status == http.StatusNotFound) {
		return fmt.Errorf("there is no schedule %q: agnx-lite schedule list --all lists them", id)
	}
	return fmt.Errorf("schedule %s: %w", id, err)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// printSchedules is the table of list: one schedule a line, next run in
// local time.
func printSchedules(out io.Writer, list []sched.Schedule, all bool) {
	if len(list) == 0 {
		if all {
			fmt.Fprintln(out, "no schedules: agents make them with their schedule tool")
		} else {
			fmt.Fprintln(out, "no active schedules (--all shows the done and cancelled ones)")
		}
		return
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tAGENT\tSTATUS\tTIMING\tNEXT\tLAST RUN\tDESTINATION")
	for i := range list {
		s := &list[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Agent, s.Status, timing(s.Timing), when(s.Next),
			lastRun(s.LastRun), destination(s.Destination))
	}
	w.Flush()
}

// printSchedule is show: the schedule, then its run log, newest first,
// late, missed, skipped and failed runs marked.
func printSchedule(out io.Writer, s sched.Schedule, runs []sched.Run) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "id\t%s\n", s.ID)
	fmt.Fprintf(w, "agent\t%s\n", s.Agent)
	fmt.Fprintf(w, "status\t%s\n", s.Status)
	fmt.Fprintf(w, "timing\t%s\n", timing(s.Timing))
	fmt.Fprintf(w, "next\t%s\n", when(s.Next))
	fmt.Fprintf(w, "destination\t%s\n", destination(s.Destination))
	fmt.Fprintf(w, "%s\t%s\n", s.Payload.Kind, clipLine(s.Payload.Text, 200))
	fmt.Fprintf(w, "created\t%s\n", when(s.CreatedAt))
	if s.Missed != "" {
		fmt.Fprintf(w, "missed runs\t%s\n", s.Missed)
	}
	if s.ActiveHours != "" {
		fmt.Fprintf(w, "active hours\t%s\n", s.ActiveHours)
	}
	fmt.Fprintf(w, "runs\t%d (%d failed)\n", s.Runs, s.Failures)
	w.Flush()
	if len(runs) == 0 {
		fmt.Fprintln(out, "\nno runs yet")
		return
	}
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DUE\tFIRED\tOUTCOME\tNOTE")
	for _, r := range runs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", when(r.Due), when(r.Fired), r.Outcome, runNote(r))
	}
	w.Flush()
}

// runNote says what is special about a run: late after a downtime, how
// many runs it stands for, its attempt, its error, why it was skipped.
func runNote(r sched.Run) string {
	var parts []string
	if r.Late {
		parts = append(parts, "late")
	}
	if r.Missed > 1 {
		parts = append(parts, strconv.Itoa(r.Missed)+" runs missed while down")
	}
	if r.Attempt > 0 {
		parts = append(parts, "attempt "+strconv.Itoa(r.Attempt+1))
	}
	if r.Error != "" {
		parts = append(parts, clipLine(r.Error, 120))
	}
	if r.Reason != "" {
		parts = append(parts, clipLine(r.Reason, 160))
	}
	return strings.Join(parts, "; ")
}

func timing(t sched.Timing) string {
	var s string
	switch {
	case t.At != nil:
		s = "at " + when(*t.At)
	case t.EverySeconds > 0:
		s = "every " + (time.Duration(t.EverySeconds) * time.Second).String()
	case t.Cron != "":
		s = "cron " + t.Cron
	default:
		s = "-"
	}
	if t.TZ != "" {
		s += " (" + t.TZ + ")"
	}
	return s
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func lastRun(r *sched.Run) string {
	if r == nil {
		return "-"
	}
	s := r.Outcome
	if r.Late {
		s += " (late)"
	}
	return s
}

func destination(d sched.Destination) string {
	if d.Gateway != "" {
		return d.Gateway + ":" + d.ChatID
	}
	if d.SessionID != "" {
		return "session " + d.SessionID
	}
	return "-"
}

// clipLine flattens text to one line of at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
