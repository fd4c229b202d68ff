package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// job loads a job of c's agent for a call; a job some daemon left
// running that no call of this one works on is marked interrupted.
func (s *Supervisor) job(ctx context.Context, c caller, id string) (*Record, error) {
	if !validJobID(id) {
		return nil, fmt.Errorf("job %q is not a job id: use one that run or list gave", clip(id))
	}
	rec, err := loadRecord(ctx, s.o.KV, id)
	if errors.Is(err, errNoJob) || err == nil && rec.Agent != c.Agent {
		return nil, fmt.Errorf("there is no job %s of this agent: call worker with action list to see its jobs", id)
	}
	if err != nil {
		return nil, err
	}
	if rec.Status == StatusRunning && !s.isBusy(id) {
		rec.Status, rec.Updated = StatusInterrupted, s.o.Now().UTC()
		if err := saveRecord(ctx, s.o.KV, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// approve applies a reviewed job's changes to the workspace.
func (s *Supervisor) approve(ctx context.Context, c caller, id string) runtime.Result {
	if err := s.hold(id, false); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	defer s.release(id, false)
	rec, err := s.job(ctx, c, id)
	if err != nil {
		return runtime.ErrorResult(err.Error())
	}
	if rec.Status != StatusReview {
		return runtime.ErrorResult(fmt.Sprintf("job %s is %s, not awaiting review: only a reviewed result can be approved", id, rec.Status))
	}
	if c.ReadOnly {
		return runtime.ErrorResult("this session's workspace is read-only, so a worker's changes cannot be applied here: ask the session that owns it")
	}
	runtime.Progress(ctx, "checking the workspace before applying job "+id)
	cs, ws, staging, base, err := s.changes(ctx, rec)
	if err != nil {
		return runtime.ErrorResult(fmt.Sprintf("job %s cannot be applied: %v", id, err))
	}
	defer ws.Close()
	defer staging.Close()
	if bad := conflicts(ws, cs, base); len(bad) > 0 {
		return runtime.ErrorResult(fmt.Sprintf("%s %v: run the worker again", listNames(bad, 5), ErrWorkspaceChanged))
	}
	if err := apply(ws, staging, cs); err != nil {
		return runtime.ErrorResult(fmt.Sprintf("job %s was applied only in part (%v): check the workspace, then approve again or run the worker again", id, err))
	}
	text := fmt.Sprintf("Job %s approved: %s applied to the workspace", id, countKinds(cs.changes))
	if len(cs.changes) > 0 {
		names := make([]string, len(cs.changes))
		for i, ch := range cs.changes {
			names[i] = ch.Path
		}
		text += " (" + listNames(names, 20) + ")"
	}
	s.end(ctx, rec, StatusApproved, text+".")
	return runtime.Result{Content: text + ".", Details: details(rec)}
}

// reject sends feedback back to the worker while retries remain (retry
// false: never), else ends the job rejected.
func (s *Supervisor) reject(ctx context.Context, c caller, id, feedback string, retry bool) runtime.Result {
	if msg := checkText("feedback", feedback); msg != "" && retry {
		return runtime.ErrorResult(msg)
	}
	if err := s.hold(id, retry); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	defer s.release(id, retry)
	rec, err := s.job(ctx, c, id)
	if err != nil {
		return runtime.ErrorResult(err.Error())
	}
	if rec.Status != StatusReview && rec.Status != StatusInterrupted {
		return runtime.ErrorResult(fmt.Sprintf("job %s is %s: only a job awaiting review or interrupted can be rejected", id, rec.Status))
	}
	entry, ok := s.o.Entries[rec.Worker]
	if _, has := s.o.Runners[rec.Worker]; !ok || !has {
		retry = false // the worker left the config
	}
	if !retry || len(rec.Attempts) >= rec.MaxAttempts && rec.Status == StatusReview {
		text := fmt.Sprintf("Job %s rejected after %d attempt(s); nothing reached the workspace.", id, len(rec.Attempts))
		if retry {
			text = fmt.Sprintf("Job %s rejected: no retries left after %d attempts; nothing reached the workspace.", id, len(rec.Attempts))
		}
		s.end(ctx, rec, StatusRejected, text)
		return runtime.Result{Content: text, Details: details(rec)}
	}
	job := Job{Dir: filepath.Join(rec.Dir, "work"), Prompt: feedback, Resume: rec.WorkerSession, Timeout: entry.RunTimeout}
	if rec.WorkerSession == "" { // interrupted before the worker said who it was
		job.Prompt = rec.Attempts[0].Prompt + "\n\nFeedback on an earlier try: " + feedback
	}
	now := s.o.Now().UTC()
	if len(rec.Attempts) < rec.MaxAttempts {
		rec.Attempts = append(rec.Attempts, Attempt{N: len(rec.Attempts) + 1, Prompt: cut(feedback, maxPromptKept), Started: now})
	} else { // interrupted on its last attempt: that one runs again
		n := len(rec.Attempts)
		rec.Attempts[n-1] = Attempt{N: n, Prompt: cut(feedback, maxPromptKept), Started: now}
	}
	rec.Status, rec.Updated = StatusRunning, s.o.Now().UTC()
	if err := saveRecord(ctx, s.o.KV, rec); err != nil {
		return runtime.ErrorResult(err.Error())
	}
	runtime.Progress(ctx, fmt.Sprintf("worker %s trying again (attempt %d of %d)", rec.Worker, len(rec.Attempts), rec.MaxAttempts))
	return s.attempt(ctx, rec, entry, job, "")
}

// fail ends a job failed: its staging goes, the user is told when told
// is set (the worker ran), and the model gets msg.
func (s *Supervisor) fail(ctx context.Context, rec *Record, msg string, told bool) runtime.Result {
	if told {
		s.end(ctx, rec, StatusFailed, msg)
	} else {
		s.end(ctx, rec, StatusFailed, "")
	}
	return runtime.Result{Content: msg, IsError: true, Details: details(rec)}
}

// interrupt records a run cut short by its call (the turn was cancelled,
// the daemon stopped): the staging stays for a retry.
func (s *Supervisor) interrupt(ctx context.Context, rec *Record) runtime.Result {
	rec.Status, rec.Updated = StatusInterrupted, s.o.Now().UTC()
	if err := saveRecord(context.WithoutCancel(ctx), s.o.KV, rec); err != nil {
		s.o.Logger.Warn("worker job not saved", "job", rec.ID, "err", err)
	}
	return runtime.ErrorResult(fmt.Sprintf("job %s was interrupted before the worker finished: call worker with action reject, the job and feedback to run it again", rec.ID))
}

// end records a job's end, removes its folder and tells the user when
// text is set.
func (s *Supervisor) end(ctx context.Context, rec *Record, st Status, text string) {
	rec.Status, rec.Updated = st, s.o.Now().UTC()
	if err := saveRecord(context.WithoutCancel(ctx), s.o.KV, rec); err != nil {
		s.o.Logger.Warn("worker job not saved", "job", rec.ID, "err", err)
	}
	if err := os.RemoveAll(rec.Dir); err != nil {
		s.o.Logger.Warn("worker job folder not removed", "job", rec.ID, "dir", rec.Dir, "err", err)
	}
	if text != "" && s.o.Notify != nil {
		s.o.Notify(Notice{Agent: rec.Agent, Session: rec.Session, Gateway: rec.Gateway, ChatID: rec.ChatID, Job: rec.ID,
			Title: fmt.Sprintf("worker %s: job %s", rec.Worker, st), Text: text})
	}
}

// details is the record for clients (never the model).
func details(rec *Record) []byte {
	data, _ := json.Marshal(rec)
	return data
}

// status describes one job and its attempts.
func (s *Supervisor) status(ctx context.Context, c caller, id string) runtime.Result {
	rec, err := s.job(ctx, c, id)
	if err != nil {
		return runtime.ErrorResult(err.Error())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Job %s: worker %s, status %s, attempts %d of %d, created %s, updated %s.\n", rec.ID, rec.Worker, rec.Status,
		len(rec.Attempts), rec.MaxAttempts, rec.Created.Format("2006-01-02 15:04:05Z"), rec.Updated.Format("2006-01-02 15:04:05Z"))
	for _, a := range rec.Attempts {
		fmt.Fprintf(&b, "- attempt %d (%s): %s", a.N, a.Started.Format("15:04:05Z"), cut(a.Prompt, 200))
		if a.Error != "" {
			fmt.Fprintf(&b, " -> error: %s", a.Error)
		} else if !a.Ended.IsZero() {
			fmt.Fprintf(&b, " -> %s: %s", orNone(a.Stop), cut(a.Result, 500))
		}
		b.WriteByte('\n')
	}
	return runtime.Result{Content: b.String(), Details: details(rec)}
}

// maxListShown is how many jobs list shows, newest last.
const maxListShown = 30

// list shows the agent's recent jobs.
func (s *Supervisor) list(ctx context.Context, c caller) runtime.Result {
	ids, err := listed(ctx, s.o.KV, c.Agent)
	if err != nil {
		return runtime.ErrorResult(err.Error())
	}
	if len(ids) > maxListShown {
		ids = ids[len(ids)-maxListShown:]
	}
	var b strings.Builder
	for _, id := range ids {
		rec, err := s.job(ctx, c, id)
		if err != nil {
			continue // forgotten
		}
		mine := ""
		if rec.Session == c.Session {
			mine = " (this session)"
		}
		fmt.Fprintf(&b, "%s worker=%s status=%s attempts=%d/%d created=%s updated=%s%s\n", rec.ID, rec.Worker, rec.Status,
			len(rec.Attempts), rec.MaxAttempts, rec.Created.Format("2006-01-02T15:04:05Z"), rec.Updated.Format("2006-01-02T15:04:05Z"), mine)
	}
	if b.Len() == 0 {
		return runtime.Result{Content: "No worker jobs yet. Workers: " + strings.Join(s.Names(), ", ") + "."}
	}
	return runtime.Result{Content: b.String()}
}
