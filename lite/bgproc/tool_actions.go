package bgproc

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// spawnResult and waitResult are the parent's answers.
type spawnResult struct {
	Handle string `json:"handle"`
	Status string `json:"status"`
	Pid    int    `json:"pid,omitempty"`
}

type waitResult struct {
	Status          string `json:"status"`
	ExitCode        int    `json:"exit_code"`
	Output          string `json:"output"`
	DurationSeconds int64  `json:"duration_seconds"`
}

func jsonResult(v any, isErr bool) runtime.Result {
	b, _ := json.MarshalIndent(v, "", "  ")
	return runtime.Result{Content: string(b), IsError: isErr}
}

// checkSpawn checks spawn's arguments and works out where it starts.
func (t *Tool) checkSpawn(call runtime.CallInfo, a args) (spawnReq, error) {
	r := spawnReq{agent: t.sb.Agent, session: call.SessionID, workspace: t.sb.Workspace, command: a.Command,
		label: a.Label, timeout: timeoutOf(a), interactive: a.Interactive, wait: a.Wait, dir: t.sb.WorkDir}
	switch {
	case strings.TrimSpace(a.Command) == "":
		return r, fmt.Errorf("'command' is required for spawn action")
	case len(a.Command) > maxCommand:
		return r, fmt.Errorf("command is %d bytes long, over %d: put it in a script in the workspace", len(a.Command), maxCommand)
	case strings.ContainsRune(a.Command, 0):
		return r, fmt.Errorf("command holds a NUL byte: remove it")
	case len(a.Label) > maxLabel:
		return r, fmt.Errorf("label is over %d bytes: give a shorter one", maxLabel)
	case a.TimeoutSeconds != nil && *a.TimeoutSeconds < 0:
		return r, fmt.Errorf("timeout_seconds is negative: give a number of seconds")
	}
	if a.Workdir != "" {
		rel, err := workdirIn(a.Workdir, t.sb.WorkDir)
		if err != nil {
			return r, err
		}
		r.workdir, r.dir = rel, path.Join(t.sb.WorkDir, rel)
	}
	return r, nil
}

// workdirIn makes workdir (relative to the workspace, or absolute under
// inside, where the workspace appears in the sandbox) a clean path
// relative to the workspace; "" is the workspace itself.
func workdirIn(workdir, inside string) (string, error) {
	if len(workdir) > 1024 || strings.ContainsRune(workdir, 0) {
		return "", fmt.Errorf("workdir is not a usable path: give a folder of the workspace")
	}
	outside := fmt.Errorf("workdir %q is outside the workspace: give a folder of the workspace (relative to it)", oneLine(workdir, 200))
	c := path.Clean(workdir)
	if path.IsAbs(c) {
		r, ok := strings.CutPrefix(c, inside)
		if !ok || r != "" && r[0] != '/' {
			return "", outside
		}
		c = path.Clean("." + r)
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", outside
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

func (t *Tool) spawn(ctx context.Context, call runtime.CallInfo, a args) (runtime.Result, error) {
	r, err := t.checkSpawn(call, a)
	if err != nil {
		return fail("%v", err), nil
	}
	p, err := t.m.spawn(ctx, t.sb.Start, r)
	if err != nil {
		if ctx.Err() != nil {
			return runtime.Result{}, ctx.Err()
		}
		return fail("Failed to spawn process: %v", err), nil
	}
	if !r.wait {
		return jsonResult(spawnResult{Handle: p.rec.Handle, Status: string(Running), Pid: p.rec.Pid}, false), nil
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		t.m.stop(p, Killed) // the turn is gone: so is what it waited for
		return runtime.Result{}, ctx.Err()
	}
	rec := p.final
	out, _ := readTail(rec.Workspace, rec.Log, waitTail)
	code := *rec.ExitCode
	return jsonResult(waitResult{Status: string(rec.Status), ExitCode: code, Output: out,
		DurationSeconds: int64(rec.Ended.Sub(rec.Started) / time.Second)}, code != 0 || rec.Status != Exited), nil
}

// maxList bounds list's answer: the most recent processes.
const maxList = 100

func (t *Tool) list(call runtime.CallInfo) (runtime.Result, error) {
	var recs []Record
	err := scanRecords(t.m.o.Store, func(r Record) {
		if r.Agent == t.sb.Agent && r.Session == call.SessionID {
			recs = append(recs, r)
		}
	})
	if err != nil {
		return runtime.Result{}, err
	}
	if len(recs) == 0 {
		return runtime.Result{Content: "No background processes for this session."}, nil
	}
	if len(recs) > maxList { // handles are ULIDs: in order of their start
		recs = recs[len(recs)-maxList:]
	}
	var b strings.Builder
	for _, r := range recs {
		status := string(r.Status)
		if r.Status == Running && t.m.live(r.Handle) == nil {
			status = string(Lost)
		}
		label := r.Label
		if label == "" {
			label = "-"
		}
		interactive := ""
		if r.Interactive {
			interactive = " [interactive]"
		}
		fmt.Fprintf(&b, "- %s | %s | %s | %s%s\n", r.Handle, oneLine(r.Command, 200), status, oneLine(label, 80), interactive)
	}
	return runtime.Result{Content: b.String()}, nil
}

// statusView is status's answer: the record, and for an ended process
// the last of its output.
type statusView struct {
	Record
	// Workspace hides the record's host path: the model knows the
	// workspace as where it is.
	Workspace  string `json:"workspace,omitempty"`
	LastOutput string `json:"last_output,omitempty"`
}

func (t *Tool) status(rec Record) runtime.Result {
	v := statusView{Record: rec}
	if rec.Status != Running {
		v.LastOutput, _ = readTail(rec.Workspace, rec.Log, noticeTail)
	}
	return jsonResult(v, false)
}

func (t *Tool) log(rec Record, a args) runtime.Result {
	offset, limit := 0, defaultLimit
	if a.Offset != nil {
		offset = max(*a.Offset, 0)
	}
	if a.Limit != nil {
		limit = min(max(*a.Limit, 0), maxLogLimit)
	}
	out, err := readWindow(rec.Workspace, rec.Log, offset, limit)
	if err != nil {
		return fail("%v", err)
	}
	if out == "" {
		out = "(no output yet)"
	}
	return runtime.Result{Content: out}
}

func (t *Tool) kill(ctx context.Context, rec Record) runtime.Result {
	p := t.m.live(rec.Handle)
	if p == nil {
		return fail("process is not running")
	}
	t.m.stop(p, Killed)
	select { // the answer waits for the end, a grace and a second at most
	case <-p.done:
	case <-ctx.Done():
	case <-time.After(t.m.o.Grace + 2*time.Second):
	}
	return runtime.Result{Content: "Killed process " + rec.Handle}
}

func (t *Tool) sendKeys(p *proc, keys string, pressEnter bool) runtime.Result {
	steps, err := parseKeys(keys, pressEnter)
	if err != nil {
		return fail("%v", err)
	}
	for _, s := range steps {
		switch {
		case s.signal != 0:
			p.bp.Interrupt(s.signal)
		case s.eof:
			p.closeStdin()
		default:
			if err := p.writeStdin(s.bytes); err != nil {
				return fail("%v", err)
			}
		}
	}
	return runtime.Result{Content: "Sent keys to " + p.rec.Handle}
}

func (t *Tool) write(p *proc, input string) runtime.Result {
	if input == "" {
		return fail("'input' is required for write action")
	}
	if len(input) > maxInput {
		return fail("input is %d bytes long, over %d: write it in parts", len(input), maxInput)
	}
	// As the parent: a model's literal \n means Enter.
	if err := p.writeStdin(strings.ReplaceAll(input, `\n`, "\n")); err != nil {
		return fail("%v", err)
	}
	return runtime.Result{Content: "Wrote to " + p.rec.Handle}
}

// writeStdin writes s to the process's stdin, waiting stdinTimeout at
// most for a process that does not read.
func (p *proc) writeStdin(s string) error {
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin == nil {
		if !p.rec.Interactive {
			return fmt.Errorf("process does not have stdin: spawn it with interactive: true")
		}
		return fmt.Errorf("process's stdin is closed (C-d or its end)")
	}
	if d, ok := p.stdin.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(stdinTimeout))
	}
	if _, err := p.stdin.Write([]byte(s)); err != nil {
		if strings.Contains(err.Error(), "timeout") {
			return fmt.Errorf("stdin write timed out: the process is not reading its input")
		}
		return fmt.Errorf("stdin write failed (%v): the process may have closed its input", err)
	}
	return nil
}
