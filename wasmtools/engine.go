package wasmtools

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"golang.org/x/sys/cpu"
)

// Engine modes: which wazero engine runs the modules.
const (
	// ModeAuto picks the compiler where wazero has one, else the interpreter.
	ModeAuto = "auto"
	// ModeCompiler compiles modules to machine code ahead of time (amd64,
	// arm64): slow to compile, fast to run, and the compiled code is cached
	// on disk.
	ModeCompiler = "compiler"
	// ModeInterpreter works on every architecture; compiling is quick,
	// running is some ten times slower.
	ModeInterpreter = "interpreter"
)

// ErrClosed is returned by Load and Run after the engine or tool is closed.
var ErrClosed = errors.New("wasmtools: closed")

// Options configure an Engine; the zero value is valid.
type Options struct {
	// CacheDir keeps compiled modules across restarts (the data dir's
	// wasm-cache). Empty means no on-disk cache.
	CacheDir string
	// Mode is ModeAuto (""), ModeCompiler or ModeInterpreter.
	Mode string
}

// Engine is the process's one wazero runtime. It is created on first use,
// so an agnx-lite that never loads a WASM tool pays nothing for it. Its
// methods are safe for concurrent use.
type Engine struct {
	opts Options
	mode string // resolved: ModeCompiler or ModeInterpreter

	mu     sync.Mutex
	rt     wazero.Runtime
	cache  wazero.CompilationCache
	wasi   map[string]bool // functions the WASI host module exports
	closed bool
}

// New returns an engine; it does no work until the first Load. Mode
// "compiler" is refused where wazero has no compiler.
func New(opts Options) (*Engine, error) {
	e := &Engine{opts: opts}
	switch opts.Mode {
	case "", ModeAuto:
		e.mode = ModeInterpreter
		if compilerSupported() {
			e.mode = ModeCompiler
		}
	case ModeCompiler:
		if !compilerSupported() {
			return nil, fmt.Errorf("wasm mode compiler is not available on %s/%s: use auto or interpreter", goruntime.GOOS, goruntime.GOARCH)
		}
		e.mode = ModeCompiler
	case ModeInterpreter:
		e.mode = ModeInterpreter
	default:
		return nil, fmt.Errorf("wasm mode %q is not known: use auto, compiler or interpreter", opts.Mode)
	}
	return e, nil
}

// Mode is the engine that runs modules: ModeCompiler or ModeInterpreter.
func (e *Engine) Mode() string { return e.mode }

// compilerSupported mirrors wazero's own check (internal/platform), which
// it does not export.
func compilerSupported() bool {
	switch goruntime.GOOS {
	case "linux", "darwin", "freebsd", "netbsd", "windows":
		if goruntime.GOARCH == "arm64" {
			return true
		}
	case "dragonfly", "solaris", "illumos":
	default:
		return false
	}
	return goruntime.GOARCH == "amd64" && cpu.X86.HasSSE41
}

// runtime returns the runtime, creating it on first use.
func (e *Engine) runtime(ctx context.Context) (wazero.Runtime, map[string]bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, nil, ErrClosed
	}
	if e.rt != nil {
		return e.rt, e.wasi, nil
	}
	cfg := wazero.NewRuntimeConfigInterpreter()
	if e.mode == ModeCompiler {
		cfg = wazero.NewRuntimeConfigCompiler()
	}
	if e.opts.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(e.opts.CacheDir)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot use %s as the WASM compile cache: %w", e.opts.CacheDir, err)
		}
		e.cache = cache
		cfg = cfg.WithCompilationCache(cache)
	}
	// The runtime-wide ceiling is the largest memory_mb any manifest may
	// ask for; each call's own limit is enforced by its memory allocator.
	cfg = cfg.WithCloseOnContextDone(true).
		WithMemoryLimitPages(MaxMemoryMB * pagesPerMB).
		WithDebugInfoEnabled(false)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, nil, fmt.Errorf("start the WASI host module: %w", err)
	}
	e.wasi = map[string]bool{}
	for name := range rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions() {
		e.wasi[name] = true
	}
	e.rt = rt
	return rt, e.wasi, nil
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close releases the runtime, every compiled module and the cache handle
// (the cache's files stay). Calls still running are stopped. Load and Run
// fail with ErrClosed afterwards.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	if e.rt != nil {
		errs = append(errs, e.rt.Close(ctx))
	}
	if e.cache != nil {
		errs = append(errs, e.cache.Close(ctx))
	}
	return errors.Join(errs...)
}

// AutoMode is the mode "auto" picks on this machine: compiler where wazero
// has one for the CPU, interpreter elsewhere.
func AutoMode() string {
	if compilerSupported() {
		return ModeCompiler
	}
	return ModeInterpreter
}
