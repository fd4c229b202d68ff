package wasmtools

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// maxModuleSize refuses modules no tool needs, before reading them.
const maxModuleSize = 256 << 20

// ToolOptions is what the agent gives a tool when it is loaded.
type ToolOptions struct {
	// Workspace is the agent's workspace folder, mounted at /workspace when
	// the manifest asks for ro or rw. A manifest that asks for one while
	// Workspace is empty is refused.
	Workspace string
	// Env is the environment the manifest's env allowlist picks from.
	Env map[string]string
	// Logger gets the tool's stderr and failures; nil discards them.
	Logger *slog.Logger
}

// Load reads the manifest at manifestPath, compiles its module (from the
// on-disk cache when it has been compiled before) and checks that it is a
// WASI command module. Its errors are one sentence naming the file.
func (e *Engine) Load(ctx context.Context, manifestPath string, opts ToolOptions) (*Tool, error) {
	m, err := LoadManifest(manifestPath)
	if err != nil {
		return nil, err
	}
	cfg, err := moduleConfig(m, opts)
	if err != nil {
		return nil, err
	}
	path := m.ModulePath()
	bin, err := readModule(path)
	if err != nil {
		return nil, err
	}
	rt, wasi, err := e.runtime(ctx)
	if err != nil {
		return nil, err
	}
	compiled, err := rt.CompileModule(ctx, bin)
	if err != nil && e.isClosed() {
		return nil, ErrClosed
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid WebAssembly module (%s): rebuild it for wasip1", path, firstLine(err))
	}
	if err := checkCommand(compiled, wasi, m.Limits.MemoryMB); err != nil {
		_ = compiled.Close(ctx)
		return nil, fmt.Errorf("%s %s", path, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tool{m: m, e: e, rt: rt, compiled: compiled, config: cfg, log: log.With("tool", m.Name)}
	if m.Workspace != WorkspaceNone {
		t.workspace = opts.Workspace
	}
	return t, nil
}

func readModule(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("cannot read the WASM module %s (%v): build it, or set module in %s", path, err, ManifestName)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("the WASM module %s is not a regular file", path)
	case st.Size() > maxModuleSize:
		return nil, fmt.Errorf("the WASM module %s is larger than %d MiB", path, maxModuleSize>>20)
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the WASM module %s: %v", path, err)
	}
	return bin, nil
}

// checkCommand accepts only what a WASI preview1 command module looks like:
// _start, an exported memory that fits the limit, and imports from
// wasi_snapshot_preview1 alone. Its message completes "<file> ...".
func checkCommand(c wazero.CompiledModule, wasi map[string]bool, memoryMB int) error {
	const how = " (build it with GOOS=wasip1 GOARCH=wasm, or for wasm32-wasip1, as a command, not a library)"
	start, ok := c.ExportedFunctions()["_start"]
	if !ok || len(start.ParamTypes()) > 0 || len(start.ResultTypes()) > 0 {
		return fmt.Errorf("is not a WASI command module: it does not export _start%s", how)
	}
	mem, ok := c.ExportedMemories()["memory"]
	if !ok {
		return fmt.Errorf("is not a WASI command module: it does not export its memory%s", how)
	}
	if need := uint64(mem.Min()) * pageSize; need > uint64(memoryMB)<<20 {
		return fmt.Errorf("needs %d MiB of memory to start, more than its limits.memory_mb of %d", (need+(1<<20)-1)>>20, memoryMB)
	}
	if len(c.ImportedMemories()) > 0 {
		return fmt.Errorf("imports its memory, which a WASI command module must define itself%s", how)
	}
	for _, f := range c.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != wasi_snapshot_preview1.ModuleName {
			return fmt.Errorf("imports %s.%s, but a tool may import only %s (WASI preview 1)", mod, name, wasi_snapshot_preview1.ModuleName)
		}
		if !wasi[name] {
			return fmt.Errorf("imports %s.%s, which wazero does not provide", mod, name)
		}
	}
	return nil
}

// moduleConfig is what every call of the tool shares: its name as argv[0],
// the allowed environment, real clocks and entropy. It checks the
// workspace the manifest asks for, which each call mounts afresh (see
// Tool.mount). Stdin, stdout and stderr are set per call.
func moduleConfig(m *Manifest, opts ToolOptions) (wazero.ModuleConfig, error) {
	cfg := wazero.NewModuleConfig().WithName("").WithArgs(m.Name).
		WithSysWalltime().WithSysNanotime().WithNanosleep(napping).WithRandSource(rand.Reader)
	for _, k := range m.Env {
		if v, ok := opts.Env[k]; ok {
			cfg = cfg.WithEnv(k, v)
		}
	}
	if m.Workspace == WorkspaceNone {
		return cfg, nil
	}
	if opts.Workspace == "" {
		return nil, fmt.Errorf("%s: the tool asks for workspace: %s, but its agent has no workspace", m.File, m.Workspace)
	}
	if st, err := os.Stat(opts.Workspace); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: the workspace %s to mount for the tool is not a folder", m.File, opts.Workspace)
	}
	return cfg, nil
}

// napping is the guest's sleep. wazero's host sleep cannot be interrupted,
// so a long sleep is taken in short naps between which the guest runs
// again and its deadline can stop it.
func napping(ns int64) {
	time.Sleep(min(time.Duration(ns), 10*time.Millisecond))
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
