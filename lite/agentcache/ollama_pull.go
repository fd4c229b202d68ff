package agentcache

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agnx-lite/agnx-lite/lite/toolset"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
)

// Bounds of a pull's stream (outside input): one status line, the whole
// stream, and the longest silence between two lines.
const (
	maxPullLine   = 64 << 10
	maxPullStream = 64 << 20
	pullIdle      = 2 * time.Minute
)

// PullOptions tune PullModel; nil means defaults.
type PullOptions struct {
	// Client is the HTTP client (nil: one without an overall timeout: a
	// pull takes as long as the download, bounded by Idle instead).
	Client *http.Client
	// Idle is how long the server may say nothing before the pull is
	// given up (0: two minutes).
	Idle time.Duration
}

// PullModel has the Ollama server at base ("" for $OLLAMA_HOST or the
// default) download model, through its POST /api/pull, showing each step
// and its bytes on p. It returns once Ollama reports success; an
// interrupted pull resumes where it stopped when run again.
func PullModel(ctx context.Context, base, model string, p *toolset.Progress, o *PullOptions) error {
	if o == nil {
		o = &PullOptions{}
	}
	client, idle := o.Client, o.Idle
	if client == nil {
		client = &http.Client{}
	}
	if idle <= 0 {
		idle = pullIdle
	}
	root := ollama.Root(base)
	if root == "" {
		root = ollama.DefaultBaseURL()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/api/pull", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the Ollama URL %q is not usable: %w (fix base_url or OLLAMA_HOST)", root, err)
	}
	req.Header.Set("Content-Type", "application/json")
	silent := errors.New("silent")
	watchdog := time.AfterFunc(idle, func() { cancel(silent) })
	defer watchdog.Stop()
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), silent) {
			return fmt.Errorf("Ollama at %s did not answer within %s: check that it runs (ollama serve)", root, idle)
		}
		return fmt.Errorf("cannot reach Ollama at %s: start it with \"ollama serve\", or set OLLAMA_HOST (%v)", root, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxPullLine))
		return fmt.Errorf("Ollama at %s would not pull %s: %s", root, model, pullError(data, resp.Status))
	}
	err = readPull(io.LimitReader(resp.Body, maxPullStream), p, func() { watchdog.Reset(idle) })
	switch {
	case err == nil:
		return nil
	case errors.Is(context.Cause(ctx), silent):
		return fmt.Errorf("Ollama at %s sent nothing for %s while pulling %s: run the pull again, it resumes", root, idle, model)
	case ctx.Err() != nil:
		return fmt.Errorf("the pull of %s stopped: %w (run it again, it resumes)", model, context.Cause(ctx))
	}
	return fmt.Errorf("Ollama at %s could not pull %s: %w", root, model, err)
}

// errPullEnded is a stream that ended without "success".
var errPullEnded = errors.New("the pull ended before it finished: run it again, it resumes")

// readPull reads Ollama's pull stream: one JSON object a line, {"status"}
// with "digest", "total" and "completed" while a layer downloads, then
// {"status":"success"}; or {"error"}. alive is called for each line.
func readPull(r io.Reader, p *toolset.Progress, alive func()) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), maxPullLine)
	var parser fastjson.Parser
	for sc.Scan() {
		alive()
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v, err := parser.ParseBytes(line)
		if err != nil || v.Type() != fastjson.TypeObject {
			return fmt.Errorf("the server sent a line that is not Ollama's pull status (%s)", toolset.OneLine(string(line), 80))
		}
		if e := v.GetStringBytes("error"); e != nil {
			return errors.New(toolset.OneLine(string(e), 300))
		}
		status := string(v.GetStringBytes("status"))
		if status == "success" {
			return nil
		}
		if status != "" {
			p.Step(status)
		}
		if total := v.GetInt64("total"); total > 0 {
			p.Count(v.GetInt64("completed"), total)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("the server sent a status line over %d KiB: it is not Ollama", maxPullLine>>10)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errPullEnded
}

// pullError is the sentence of a refused pull: Ollama's {"error"}, or the
// HTTP status.
func pullError(data []byte, status string) string {
	var parser fastjson.Parser
	if v, err := parser.ParseBytes(data); err == nil {
		if e := v.GetStringBytes("error"); len(e) > 0 {
			return toolset.OneLine(string(e), 300)
		}
	}
	return "it answered " + strings.TrimSpace(status)
}
