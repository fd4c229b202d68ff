package wasmtools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/tetratelabs/wazero/sys"
)

// toolOutput is the structured form of stdout.
type toolOutput struct {
	Content *string         `json:"content"`
	Details json.RawMessage `json:"details"`
}

// failure is what went wrong in a call, or "" when nothing did.
func (t *Tool) failure(r *run) string {
	lim := t.m.Limits
	var ee *sys.ExitError
	switch {
	case r.timedOut:
		return fmt.Sprintf("timed out after %s (limits.timeout): the tool was stopped", lim.Timeout)
	case r.mem.denied.Load():
		return fmt.Sprintf("out of memory: the tool may use at most %d MiB (limits.memory_mb)", lim.MemoryMB)
	case r.err == nil:
		return ""
	case errors.As(r.err, &ee):
		return fmt.Sprintf("exit code %d", ee.ExitCode())
	}
	return "the tool crashed: " + firstLine(r.err)
}

// result turns a call into what the model reads: stdout (or its JSON
// content) on success; stdout, the end of stderr and the reason on
// failure.
func (t *Tool) result(r *run) runtime.Result {
	stderr := r.stderr.String()
	why := t.failure(r)
	if why == "" {
		if stderr != "" {
			t.log.Info("wasm tool wrote to stderr", "stderr", stderr)
		}
		return t.success(r)
	}
	code := exitCode(r.err)
	if r.timedOut {
		code = 0 // not the guest's: wazero's marker for a done context
	}
	t.log.Warn("wasm tool failed", "reason", why, "exit_code", code, "timed_out", r.timedOut,
		"duration_ms", r.duration.Milliseconds(), "stderr", stderr)
	var b strings.Builder
	b.Write(r.stdout.buf)
	note := func(s string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	if r.stdout.cut > 0 {
		note(t.cutMarker(r.stdout.cut))
	}
	if s := strings.TrimSpace(stderr); s != "" {
		note(s)
	}
	note("[" + why + "]")
	details, _ := json.Marshal(map[string]any{"exit_code": code, "timed_out": r.timedOut,
		"out_of_memory": r.mem.denied.Load(), "cut_bytes": r.stdout.cut, "duration_ms": r.duration.Milliseconds()})
	return runtime.Result{Content: strings.ToValidUTF8(b.String(), "\uFFFD"), Details: details, IsError: true}
}

func (t *Tool) success(r *run) runtime.Result {
	out := r.stdout.buf
	if r.stdout.cut == 0 {
		if trimmed := bytes.TrimSpace(out); len(trimmed) > 0 && trimmed[0] == '{' {
			var o toolOutput
			if json.Unmarshal(trimmed, &o) == nil && o.Content != nil {
				res := runtime.Result{Content: strings.ToValidUTF8(*o.Content, "\uFFFD")}
				if len(o.Details) > 0 && string(o.Details) != "null" {
					res.Details = o.Details
				}
				return res
			}
		}
	}
	text := string(out)
	if r.stdout.cut > 0 {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += t.cutMarker(r.stdout.cut)
	}
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
	}
	return runtime.Result{Content: strings.ToValidUTF8(text, "\uFFFD")}
}

func (t *Tool) cutMarker(cut int64) string {
	return fmt.Sprintf("[... %d more bytes of output were cut: the limit is %d KiB (limits.output_kb) ...]", cut, t.m.Limits.OutputKB)
}
