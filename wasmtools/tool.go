package wasmtools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// stderrTail is how much of a tool's stderr is kept for the log and for
// an error result.
const stderrTail = 4 << 10

// Tool is one loaded WASM tool: a compiled module plus its manifest. Every
// Run instantiates the module afresh, so calls share no state and may run
// in parallel.
type Tool struct {
	m        *Manifest
	e        *Engine
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	config   wazero.ModuleConfig
	// workspace is the folder mounted at /workspace, "" for none.
	workspace string
	log       *slog.Logger
	closed    atomic.Bool
}

var _ runtime.Tool = (*Tool)(nil)

// Spec describes the tool to the model, from its manifest.
func (t *Tool) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: t.m.Name, Description: t.m.Description, Schema: t.m.Schema}
}

// Manifest is the tool's manifest; callers must not modify it.
func (t *Tool) Manifest() *Manifest { return t.m }

// Close releases the compiled module; calls already running finish. Run
// fails with ErrClosed afterwards.
func (t *Tool) Close(ctx context.Context) error {
	if t.closed.Swap(true) {
		return nil
	}
	return t.compiled.Close(ctx)
}

// run is what one call did.
type run struct {
	stdout   capWriter
	stderr   tailWriter
	mem      memLimit
	err      error // from InstantiateModule, nil on exit code 0
	timedOut bool
	duration time.Duration
}

// Run runs the module once with args as its stdin. What the tool did,
// failures included, is the Result; an error means the call could not run
// or ctx was cancelled.
func (t *Tool) Run(ctx context.Context, args []byte) (runtime.Result, error) {
	if t.closed.Load() {
		return runtime.Result{}, fmt.Errorf("run wasm tool %s: %w", t.m.Name, ErrClosed)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	lim := t.m.Limits
	r := &run{stdout: capWriter{limit: lim.OutputKB << 10}, stderr: tailWriter{limit: stderrTail},
		mem: memLimit{limit: uint64(lim.MemoryMB) << 20}}
	callCtx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cfg, unmount, err := t.mount(ctx, t.config.WithStdin(bytes.NewReader(args)).WithStdout(&r.stdout).WithStderr(&r.stderr))
	if err != nil {
		return runtime.Result{}, err
	}
	defer unmount()
	start := time.Now()
	r.err = t.instantiate(experimental.WithMemoryAllocator(callCtx, &r.mem), cfg)
	r.duration = time.Since(start)
	if exitCode(r.err) == sys.ExitCodeDeadlineExceeded || exitCode(r.err) == sys.ExitCodeContextCanceled {
		if ctx.Err() != nil {
			return runtime.Result{}, ctx.Err()
		}
		r.timedOut = true
	}
	if r.err != nil && (t.closed.Load() || t.e.isClosed()) {
		return runtime.Result{}, fmt.Errorf("run wasm tool %s: %w", t.m.Name, ErrClosed)
	}
	return t.result(r), nil
}

// mount adds the workspace to cfg, opened for this call only: a workspace
// moved or recreated since the tool loaded is the one the call sees, and
// no descriptor is held between calls. A call with a workspace override
// (a subagent in its parent's workspace: tools.WorkspaceFor) mounts that
// folder instead, read-only when the call is; a tool granted no
// workspace gets none either way.
func (t *Tool) mount(ctx context.Context, cfg wazero.ModuleConfig) (wazero.ModuleConfig, func(), error) {
	if t.workspace == "" {
		return cfg, func() {}, nil
	}
	dir, readOnly := tools.WorkspaceFor(ctx, t.workspace)
	fs, err := openRootFS(dir, readOnly || t.m.Workspace != WorkspaceRW)
	if err != nil {
		return nil, nil, fmt.Errorf("run wasm tool %s: cannot open the workspace %s (%w): create it again, or reload the agent", t.m.Name, dir, err)
	}
	mounted := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(fs, "/workspace")
	return cfg.WithFSConfig(mounted), func() { _ = fs.root.Close() }, nil
}

// instantiate runs _start in a new instance and closes it. A panic inside
// wazero becomes an error: a tool must never take the daemon down.
func (t *Tool) instantiate(ctx context.Context, cfg wazero.ModuleConfig) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("wazero panicked: %v", p)
		}
	}()
	mod, err := t.rt.InstantiateModule(ctx, t.compiled, cfg)
	if mod != nil {
		_ = mod.Close(context.WithoutCancel(ctx))
	}
	return err
}

// exitCode is the guest's exit code in err (sys.ExitCodeDeadlineExceeded
// and sys.ExitCodeContextCanceled when wazero stopped it), 0 when err is
// nil or not an exit (a trap).
func exitCode(err error) uint32 {
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// Kind is "wasm", for metrics.
func (t *Tool) Kind() string { return "wasm" }

// Deadline is the manifest's timeout: the loop gives up on a call that
// has not returned by then (plus a grace).
func (t *Tool) Deadline([]byte) time.Duration { return t.m.Limits.Timeout }

var _ runtime.Deadliner = (*Tool)(nil)
