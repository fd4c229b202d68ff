package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Options configure a Supervisor. Entries (checked by CheckAll), Runners
// (one per entry), KV and DataDir are required.
type Options struct {
	Entries map[string]Entry
	Runners map[string]Runner
	KV      KV
	// DataDir holds the jobs' folders, <DataDir>/workers/<job>; a
	// worker's sandbox sees only its job's work/ folder.
	DataDir string
	// Notify tells the user how a job ended (approved, rejected,
	// failed); nil: nobody is told.
	Notify func(Notice)
	Limits Limits
	// MaxRunning is how many workers may run at once (default 1: a
	// coding agent can take hundreds of MB).
	MaxRunning int
	Logger     *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Notice is a job's end, for the user, from the session that ran it.
type Notice struct {
	Agent, Session, Gateway, ChatID string
	Job, Title, Text                string
}

// Supervisor runs workers on copies of agents' workspaces and applies
// what they did once the supervising agent approves. It holds no
// goroutine: each job runs in the tool call that started it.
//
// A job's life: run copies the workspace into <DataDir>/workers/<job>/work
// (the only folder the worker's sandbox gets) and notes each file's size
// and sha256 beside it (base.json, out of the worker's reach); the worker
// runs there; its change set (files added, changed, deleted against that
// note) and diff go to the model, status awaiting_review. approve writes
// the change set into the workspace; reject resumes the worker's session
// with the feedback in the same folder, up to Entry.Retries times, then
// ends the job. An end (approved, rejected, failed) removes the folder
// and tells the user through Notify.
//
// # Caveats
//
//   - approve checks only the files the change set touches: a file the
//     worker did not touch may have changed in the workspace meanwhile.
//   - Symlinks and special files are never copied nor applied, and
//     empty folders are not applied: the change set is regular files.
//   - The apply is file by file, each atomic; a failure midway (disk
//     full) leaves the files before it applied and says so.
//   - A job is owned by its agent: any session of the agent may approve
//     or reject it. An agent's list keeps its last 100 jobs.
type Supervisor struct {
	o Options
	// mu guards busy (the jobs a call of this process is working on)
	// and running (how many of those have a worker running).
	mu      sync.Mutex
	busy    map[string]bool
	running int
}

// New returns a Supervisor over o.
func New(o Options) *Supervisor {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = 1
	}
	o.Limits = o.Limits.withDefaults()
	return &Supervisor{o: o, busy: map[string]bool{}}
}

// Names are the configured workers' names, sorted.
func (s *Supervisor) Names() []string {
	names := make([]string, 0, len(s.o.Runners))
	for n := range s.o.Runners {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// caller is who calls the tool: the session's agent and chat, and the
// workspace its file tools work in.
type caller struct {
	Agent, Session, Gateway, ChatID string
	Workspace                       string
	ReadOnly                        bool
}

// hold marks id busy for one call; worker also takes a running slot.
func (s *Supervisor) hold(id string, worker bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[id] {
		return fmt.Errorf("job %s is busy with another call: wait for it to finish", id)
	}
	if worker && s.running >= s.o.MaxRunning {
		return fmt.Errorf("%d worker(s) already running, the most at once: wait for one to finish, then try again", s.running)
	}
	s.busy[id] = true
	if worker {
		s.running++
	}
	return nil
}

func (s *Supervisor) release(id string, worker bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.busy, id)
	if worker {
		s.running--
	}
}

func (s *Supervisor) isBusy(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy[id]
}

func (s *Supervisor) jobsDir() string { return filepath.Join(s.o.DataDir, "workers") }

// maxTask bounds a task and a feedback.
const maxTask = 32 << 10

// run starts a job: copy, worker, diff.
func (s *Supervisor) run(ctx context.Context, c caller, worker, task string) runtime.Result {
	entry, ok := s.o.Entries[worker]
	if _, has := s.o.Runners[worker]; !ok || !has {
		return runtime.ErrorResult(fmt.Sprintf("there is no worker %q: use one of %s", clip(worker), strings.Join(s.Names(), ", ")))
	}
	if msg := checkText("task", task); msg != "" {
		return runtime.ErrorResult(msg)
	}
	if !filepath.IsAbs(c.Workspace) {
		return runtime.ErrorResult("this agent has no workspace to copy for a worker: give it one")
	}
	if inside(c.Workspace, s.jobsDir()) {
		return runtime.ErrorResult("the workspace holds agnx-lite's data dir, which a worker must never see: give the agent a workspace outside it")
	}
	now := s.o.Now().UTC()
	id := newJobID(now)
	if err := s.hold(id, true); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	defer s.release(id, true)
	rec := &Record{ID: id, Worker: worker, Agent: c.Agent, Session: c.Session, Gateway: c.Gateway, ChatID: c.ChatID,
		Workspace: c.Workspace, Dir: filepath.Join(s.jobsDir(), id), MaxAttempts: 1 + entry.Retries,
		Status: StatusRunning, Attempts: []Attempt{{N: 1, Prompt: cut(task, maxPromptKept), Started: now}}, Created: now, Updated: now}
	if err := s.create(ctx, rec); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	runtime.Progress(ctx, "copying the workspace for worker "+worker)
	st, err := stage(ctx, c.Workspace, filepath.Join(rec.Dir, "work"), s.o.Limits, throttled(ctx))
	if err == nil {
		err = saveManifest(rec.Dir, st.base)
	}
	if err != nil {
		return s.fail(ctx, rec, fmt.Sprintf("the workspace could not be copied for the worker: %v", err), false)
	}
	runtime.Progress(ctx, fmt.Sprintf("copied %d files (%d KiB); worker %s running", len(st.base), st.bytes>>10, worker))
	note := ""
	if len(st.skipped) > 0 {
		note = "Not copied (symlinks and special files are skipped): " + strings.Join(st.skipped, ", ") + "\n"
	}
	return s.attempt(ctx, rec, entry, Job{Dir: filepath.Join(rec.Dir, "work"), Prompt: task, Timeout: entry.RunTimeout}, note)
}

// create stores a new job's record and lists it; jobs that fell off the
// agent's list are forgotten when finished.
func (s *Supervisor) create(ctx context.Context, rec *Record) error {
	if err := saveRecord(ctx, s.o.KV, rec); err != nil {
		return err
	}
	dropped, err := addListed(ctx, s.o.KV, rec.Agent, rec.ID)
	if err != nil {
		return fmt.Errorf("list job %s: %w", rec.ID, err)
	}
	for _, id := range dropped {
		if old, err := loadRecord(ctx, s.o.KV, id); err == nil && old.Status.Final() {
			_ = s.o.KV.PutKV(ctx, recordKey(id), nil)
		}
	}
	return nil
}

// errRunTimeout is the cause of a run's context ending at its timeout.
var errRunTimeout = errors.New("the worker's timeout passed")

// runGrace is how long past its timeout a runner gets to stop the worker
// itself before the run's context ends too.
const runGrace = 10 * time.Second

// attempt runs the worker once on rec (its last attempt) and records the
// outcome: a diff to review, or a failure.
func (s *Supervisor) attempt(ctx context.Context, rec *Record, e Entry, job Job, note string) runtime.Result {
	runner := s.o.Runners[rec.Worker]
	runCtx, cancel := context.WithTimeoutCause(ctx, e.RunTimeout+runGrace, errRunTimeout)
	defer cancel()
	start := s.o.Now()
	out, err := runner.Run(runCtx, job)
	a := &rec.Attempts[len(rec.Attempts)-1]
	a.Ended, a.Stop = s.o.Now().UTC(), out.Stop
	if out.SessionID != "" {
		rec.WorkerSession = out.SessionID
	}
	a.Result = cut(out.Text, maxResultKept)
	switch {
	case err != nil && ctx.Err() != nil:
		a.Error = "interrupted: " + err.Error()
		return s.interrupt(ctx, rec)
	case err != nil && (context.Cause(runCtx) == errRunTimeout || s.o.Now().Sub(start) >= e.RunTimeout):
		a.Error = fmt.Sprintf("did not finish within %s", e.RunTimeout)
		return s.fail(ctx, rec, fmt.Sprintf("Worker %s did not finish within %s and was stopped (%v); job %s failed and nothing reached the workspace.",
			rec.Worker, e.RunTimeout, err, rec.ID), true)
	case err != nil:
		a.Error = err.Error()
		return s.fail(ctx, rec, fmt.Sprintf("Worker %s failed (%v); job %s failed and nothing reached the workspace.", rec.Worker, err, rec.ID), true)
	}
	runtime.Progress(ctx, "worker "+rec.Worker+" finished; comparing its work with the workspace")
	text, err := s.review(ctx, rec, out)
	if err != nil {
		a.Error = err.Error()
		return s.fail(ctx, rec, fmt.Sprintf("The work of worker %s could not be compared with the workspace: %v; job %s failed.", rec.Worker, err, rec.ID), true)
	}
	rec.Status, rec.Updated = StatusReview, s.o.Now().UTC()
	if err := saveRecord(context.WithoutCancel(ctx), s.o.KV, rec); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	return runtime.Result{Content: note + text, Details: details(rec)}
}

// review is what the supervising agent reads after an attempt: the
// worker's final message, the diff and what to do next.
func (s *Supervisor) review(ctx context.Context, rec *Record, out Outcome) (string, error) {
	cs, ws, staging, base, err := s.changes(ctx, rec)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	defer staging.Close()
	diff := renderDiff(ws, staging, cs, base, s.o.Limits.MaxDiff)
	n := len(rec.Attempts)
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s (worker %s), attempt %d of %d: status %s; stop reason %s.\n", rec.ID, rec.Worker, n, rec.MaxAttempts,
		StatusReview, orNone(out.Stop))
	fmt.Fprintf(&b, "Worker's final message:\n%s\n\n", orNone(cut(out.Text, maxResultKept)))
	if len(cs.changes) == 0 {
		b.WriteString("The worker changed no file.\n")
	} else {
		fmt.Fprintf(&b, "Changes (%s):\n%s", countKinds(cs.changes), diff)
	}
	b.WriteString("\nNothing has reached the workspace yet. Call worker with action approve and job " + rec.ID +
		" to apply these changes, or action reject with job " + rec.ID + " and feedback")
	if left := rec.MaxAttempts - n; left > 0 {
		fmt.Fprintf(&b, " to have the worker try again (%d retries left).\n", left)
	} else {
		b.WriteString(" to discard them (no retries left).\n")
	}
	return b.String(), nil
}

// changes opens the job's roots and compares the staging with its copy.
func (s *Supervisor) changes(ctx context.Context, rec *Record) (cs *changeSet, ws, staging *os.Root, base manifest, err error) {
	if base, err = loadManifest(rec.Dir); err != nil {
		return nil, nil, nil, nil, err
	}
	work := filepath.Join(rec.Dir, "work")
	if cs, err = scan(ctx, work, base, s.o.Limits); err != nil {
		return nil, nil, nil, nil, err
	}
	if ws, err = os.OpenRoot(rec.Workspace); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("the workspace %s cannot be opened: %w", rec.Workspace, err)
	}
	if staging, err = os.OpenRoot(work); err != nil {
		ws.Close()
		return nil, nil, nil, nil, fmt.Errorf("the staging folder cannot be opened: %w", err)
	}
	return cs, ws, staging, base, nil
}

// throttled passes progress on at most every progressEvery: a fast copy
// of many files does not flood the session's followers.
func throttled(ctx context.Context) func(string) {
	var last time.Time
	return func(text string) {
		if now := time.Now(); now.Sub(last) >= progressEvery {
			last = now
			runtime.Progress(ctx, text)
		}
	}
}
