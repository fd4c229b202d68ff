package toolset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/wasmtools"
)

// wasmEngine is the process's one WASM engine, made on the first WASM
// tool: an agent without one never pays for wazero.
type wasmEngine struct {
	cacheDir string
	mode     string
	env      map[string]config.Secret // sandbox.env: what tools' env: may name
	log      *slog.Logger
	// progress, when set, shows a compile that takes a while (the first
	// of a module; later ones load from cacheDir).
	progress *Progress
	slow     time.Duration // 0: wasmSlow

	// held is what each module held when first loaded (wasmcost.go), by
	// its file; measure measures (nil: heldNow; tests fake it). A load
	// that measures holds heldMu alone, so that no other load's memory
	// is counted as its own.
	heldMu  sync.RWMutex
	held    map[moduleKey]Held
	measure func() Held

	once sync.Once
	eng  *wasmtools.Engine
	err  error
}

func (w *wasmEngine) engine() (*wasmtools.Engine, error) {
	w.once.Do(func() {
		w.eng, w.err = wasmtools.New(wasmtools.Options{CacheDir: w.cacheDir, Mode: w.mode})
		if w.err != nil {
			w.err = fmt.Errorf("the WASM engine cannot start: %w (check wasm.mode in agnx.yaml)", w.err)
		}
	})
	return w.eng, w.err
}

// wasmSlow is how long a tool's load may take before the progress says
// it is compiling: one cached by an earlier compile loads quicker.
const wasmSlow = 300 * time.Millisecond

// load compiles one tool for an agent. name, when set, must be the
// manifest's name.
func (w *wasmEngine) load(a *agents.Agent, manifest, name string) (*wasmTool, error) {
	if err := insideAgent(a, manifest); err != nil {
		return nil, err
	}
	m, err := wasmtools.LoadManifest(manifest)
	if err != nil {
		return nil, err
	}
	if err := insideAgent(a, m.ModulePath()); err != nil {
		return nil, err
	}
	eng, err := w.engine()
	if err != nil {
		return nil, err
	}
	var t *wasmtools.Tool
	var h Held
	err = w.progress.After(cmp.Or(w.slow, wasmSlow), "compiling the WASM tool "+m.Name+" (the first time only)", func() (err error) {
		t, h, err = w.measured(m.ModulePath(), func() (*wasmtools.Tool, error) {
			return eng.Load(context.Background(), manifest, wasmtools.ToolOptions{
				Workspace: a.Workspace, Env: environ(w.env, os.LookupEnv), Logger: w.log.With("agent", a.Name)})
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if name != "" && t.Manifest().Name != name {
		t.Close(context.Background())
		return nil, fmt.Errorf("%s names the tool %q but spec.tools calls it %q: make them agree", manifest, t.Manifest().Name, name)
	}
	return &wasmTool{Tool: t, held: h}, nil
}

// insideAgent refuses a tool file that is, or leads through a symlink to,
// a file outside the agent's folder: a manifest's description goes to the
// model, so it must be the agent's own.
func insideAgent(a *agents.Agent, file string) error {
	if _, err := a.StatFile(file); errors.Is(err, agents.ErrOutside) {
		return &agents.Error{File: file, Msg: "is a link that " + agents.ErrOutside.Error() +
			": a tool may use only files inside its agent's folder; copy the file into it"}
	}
	return nil
}

// wasmManifest is where a type: wasm entry's manifest is: its path (a
// tool.yaml or the folder holding one), or tools/<name>/tool.yaml.
func wasmManifest(a *agents.Agent, ref agents.ToolRef) string {
	p := ref.Path
	if p == "" {
		p = filepath.Join("tools", ref.Name)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.Dir, p)
	}
	if !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") {
		p = filepath.Join(p, wasmtools.ManifestName)
	}
	return p
}

// discover loads the WASM tools in the agent's tools/ folder that spec.tools
// does not list (a folder with a tool.yaml is a WASM tool).
func (w *wasmEngine) discover(a *agents.Agent, listed map[string]bool) ([]runtime.Tool, error) {
	dirs, err := os.ReadDir(filepath.Join(a.Dir, "tools"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []runtime.Tool
	for _, d := range dirs {
		m := filepath.Join(a.Dir, "tools", d.Name(), wasmtools.ManifestName)
		if !d.IsDir() || listed[m] {
			continue
		}
		if _, err := os.Stat(m); err != nil {
			continue
		}
		t, err := w.load(a, m, "")
		if err != nil {
			CloseTools(out)
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (w *wasmEngine) close() {
	if w.eng != nil {
		w.eng.Close(context.Background())
	}
}

// closeTools releases what tools hold (compiled WASM modules); calls
// already running finish first.
func CloseTools(ts []runtime.Tool) {
	for _, t := range ts {
		if c, ok := t.(interface{ Close(context.Context) error }); ok {
			c.Close(context.Background())
		}
	}
}

// harmlessEnv are the daemon's variables a WASM tool's manifest may name
// without the operator's say: the time zone and the language, which no
// one keeps a secret in. Nothing else of the daemon's environment is ever
// offered.
var harmlessEnv = []string{"TZ", "LANG", "LC_ALL"}

// environ is all a WASM tool's manifest may pick its env: names from:
// what the operator put in sandbox.env, and harmlessEnv from the daemon's
// environment (lookup). The manifest comes with the agent, maybe an
// imported one, and a tool's output goes to the model: naming
// OPENAI_API_KEY or DATABASE_URL there must hand nothing over, whatever a
// secret is called. A name offered by neither is absent from the tool's
// environment.
func environ(operator map[string]config.Secret, lookup func(string) (string, bool)) map[string]string {
	m := make(map[string]string, len(harmlessEnv)+len(operator))
	for _, k := range harmlessEnv {
		if v, ok := lookup(k); ok {
			m[k] = v
		}
	}
	for k, v := range operator {
		m[k] = v.Value()
	}
	return m
}
