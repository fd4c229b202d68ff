package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/wasmtools"
)

// Check is one line of `doctor`: what was checked, how it went, and the
// fix when it did not go well.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok | warn | fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Pull, on a failed Ollama check, names the models that server lacks,
	// so a terminal can offer to pull them (lite.PullModel).
	Pull *ModelPull `json:"-"`
}

// ModelPull is what an Ollama server lacks: its URL and the models.
type ModelPull struct {
	Base   string
	Models []string
}

func ok(name, detail string) Check { return Check{Name: name, Status: "ok", Detail: detail} }

// Run checks the installation: config, data dir, database, agents,
// their providers and models, and the sandbox.
func Run(ctx context.Context, cfg *config.Config) []Check {
	out := append(configChecks(cfg), dataDirCheck(cfg), databaseCheck(cfg))
	out = append(out, schedulesCheck(cfg)...)
	list, agentChecks := agentsCheck(cfg)
	out = append(out, agentChecks...)
	out = append(out, providerChecks(ctx, list)...)
	out = append(out, mcpChecks(ctx, cfg, list)...)
	out = append(out, hookChecks(cfg)...)
	out = append(out, sandboxCheck(ctx, cfg), wasmCheck(cfg))
	return append(out, hostChecks(ctx, cfg)...)
}

// configChecks says which config applies, then one warning per key it
// ignores or handles otherwise than Agnx (Config.Warnings).
func configChecks(cfg *config.Config) []Check {
	if cfg.File == "" {
		return []Check{ok("config", "no agnx.yaml: the embedded defaults apply")}
	}
	out := []Check{ok("config", cfg.File+" is valid")}
	if cfg.FileMissing() {
		out = out[:0]
	}
	for _, w := range cfg.Warnings {
		out = append(out, Check{Name: "config", Status: "warn", Detail: w,
			Fix: "remove or correct the key, or leave it if the file is shared with Agnx"})
	}
	return out
}

func dataDirCheck(cfg *config.Config) Check {
	probe := filepath.Join(cfg.DataDir, ".doctor-probe")
	if err := os.MkdirAll(cfg.DataDir, 0o700); err == nil {
		if err = os.WriteFile(probe, []byte("ok"), 0o600); err == nil {
			os.Remove(probe)
			return ok("data dir", cfg.DataDir+" is writable")
		}
	}
	return Check{Name: "data dir", Status: "fail", Detail: cfg.DataDir + " is not writable",
		Fix: "fix its permissions or choose another with --data-dir"}
}

func databaseCheck(cfg *config.Config) Check {
	if _, err := os.Stat(cfg.DBPath()); errors.Is(err, os.ErrNotExist) {
		return ok("database", "none yet: it is created on first use")
	}
	if d := config.ReadDaemon(cfg); d != nil {
		return ok("database", fmt.Sprintf("held by the running daemon (pid %d)", d.PID))
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true})
	if err != nil {
		var locked *storage.LockedError
		if errors.As(err, &locked) {
			return ok("database", "held by another agnx-lite process: "+err.Error())
		}
		if errors.Is(err, storage.ErrCorrupt) {
			return Check{Name: "database", Status: "fail", Detail: err.Error()} // the sentence says what to do
		}
		return Check{Name: "database", Status: "fail", Detail: err.Error(), Fix: "restore agnx.db from a backup, or move it away to start afresh"}
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		return Check{Name: "database", Status: "fail", Detail: err.Error()}
	}
	stats, _ := st.Stats()
	detail := fmt.Sprintf("%s: consistent, %d sessions, %.1f MiB", cfg.DBPath(), stats.Sessions, float64(stats.FileSize)/(1<<20))
	return ok("database", detail+spaceNote(st, stats))
}

// spaceNote tells how much of the file is free pages, when that is a
// good share (db compact gives them back), and the archive files' size.
func spaceNote(st *storage.Store, stats storage.Stats) string {
	var note string
	free := int64(stats.FreePages) * int64(os.Getpagesize())
	if stats.FileSize > 0 && free*4 > stats.FileSize && free > 1<<20 {
		note = fmt.Sprintf(" (%.1f MiB free pages, reused as it grows; \"agnx-lite db compact\" gives them back)", float64(free)/(1<<20))
	}
	if size, files, err := runtime.ArchiveSize(st); err == nil && files > 0 {
		note += fmt.Sprintf("; archive: %d sessions, %.1f MiB", files, float64(size)/(1<<20))
	}
	return note
}

func agentsCheck(cfg *config.Config) ([]*agents.Agent, []Check) {
	entries, err := agents.List(cfg.AgentsDir)
	if err != nil || len(entries) == 0 {
		return nil, []Check{{Name: "agents", Status: "warn", Detail: "no agents in " + cfg.AgentsDir, Fix: "run agnx-lite init"}}
	}
	var loaded []*agents.Agent
	var out []Check
	for _, e := range entries {
		a, err := agents.Load(e.Dir)
		if err != nil {
			out = append(out, Check{Name: "agent " + e.Name, Status: "fail", Detail: err.Error(), Fix: "fix the file at that line"})
			continue
		}
		loaded = append(loaded, a)
		for _, w := range a.Warnings {
			out = append(out, Check{Name: "agent " + e.Name, Status: "warn", Detail: w})
		}
	}
	_, shared := agents.LoadDirectives(filepath.Join(cfg.DataDir, agents.DirectivesDir))
	for _, w := range shared {
		out = append(out, Check{Name: "directives", Status: "warn", Detail: w})
	}
	out = append(out, ok("agents", fmt.Sprintf("%d of %d valid", len(loaded), len(entries))))
	return loaded, out
}

// providerChecks asks each distinct server once whether it answers and
// has the models its agents use.
func providerChecks(ctx context.Context, list []*agents.Agent) []Check {
	type server struct{ provider, url string }
	models := map[server][]string{}
	var order []server
	for _, a := range list {
		s := server{a.Model.Provider, a.Model.BaseURL}
		if s.provider == "ollama" {
			s.url = ollama.Root(s.url)
			if s.url == "" {
				s.url = ollama.DefaultBaseURL()
			}
		}
		if _, seen := models[s]; !seen {
			order = append(order, s)
		}
		models[s] = append(models[s], a.Model.Name)
	}
	var out []Check
	for _, s := range order {
		if s.provider != "ollama" {
			out = append(out, ok("provider "+s.provider, "models "+strings.Join(models[s], ", ")+" (not probed: hosted or OpenAI-compatible)"))
			continue
		}
		out = append(out, ollamaCheck(ctx, s.url, models[s]))
	}
	return out
}

func ollamaCheck(ctx context.Context, base string, want []string) Check {
	name := "ollama " + httpapi.RedactURL(base) // the daemon's health shows it
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/api/tags", nil)
	if err != nil {
		return Check{Name: name, Status: "fail", Detail: "not a URL: " + httpapi.RedactURL(base), Fix: "set spec.model.base_url / OLLAMA_HOST to http://host:11434"}
	}
	if u := req.URL.User; u != nil {
		// Sent as the header the URL would make, but kept out of the URL
		// an error repeats (Go hides a password there, not a user name).
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
		req.URL.User = nil
	}
	req.Close = true // the daemon's health asks again in 30 s: keep no idle connection (and its goroutines) meanwhile
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Check{Name: name, Status: "fail", Detail: "not reachable: " + err.Error(),
			Fix: `start it with "ollama serve", or set spec.model.base_url / OLLAMA_HOST`}
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&tags) != nil {
		return Check{Name: name, Status: "fail", Detail: fmt.Sprintf("answered %d, not like Ollama", resp.StatusCode),
			Fix: "check that the URL points at Ollama"}
	}
	var have []string
	for _, m := range tags.Models {
		have = append(have, m.Name, strings.TrimSuffix(m.Name, ":latest"))
	}
	var missing []string
	for _, m := range want {
		if !slices.Contains(have, m) && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return Check{Name: name, Status: "fail", Detail: "reachable, but missing " + strings.Join(missing, ", "),
			Fix: "ollama pull " + strings.Join(missing, " && ollama pull ") +
				" (or, from here: agnx-lite model pull " + strings.Join(missing, ", agnx-lite model pull ") + ")",
			Pull: &ModelPull{Base: base, Models: missing}}
	}
	return ok(name, "reachable, has "+strings.Join(want, ", "))
}

func sandboxCheck(ctx context.Context, cfg *config.Config) Check {
	if cfg.Sandbox.Mode == "trust" {
		return Check{Name: "sandbox", Status: "warn", Detail: "sandbox.mode is trust: shell and CLI tools run without isolation",
			Fix: "set sandbox.mode: bwrap"}
	}
	st := (&bwrap.Runner{NetworkHelper: cfg.Sandbox.NetworkHelper}).Probe(ctx)
	if !st.Usable {
		return Check{Name: "sandbox", Status: "fail", Detail: "bwrap mode, unusable: " + st.Problem,
			Fix: "shell and CLI tools refuse to run until it works"}
	}
	if st.NetworkProblem != "" {
		return Check{Name: "sandbox", Status: "warn",
			Detail: fmt.Sprintf("bwrap mode, %s, works; tools with network: true refuse to run: %s", st.Version, st.NetworkProblem),
			Fix:    "tools without network: true are not affected"}
	}
	return ok("sandbox", fmt.Sprintf("bwrap mode, %s, user/pid/net namespaces work; network: true through %s (sandbox.network_helper: %s)",
		st.Version, st.Network, cfg.Sandbox.NetworkHelper))
}

func wasmCheck(cfg *config.Config) Check {
	mode := cfg.Wasm.Mode
	if mode == "" || mode == wasmtools.ModeAuto {
		mode = "auto: " + wasmtools.AutoMode()
	}
	return ok("wasm", "WASM tools run with wazero, "+mode+" on "+goruntime.GOARCH)
}
