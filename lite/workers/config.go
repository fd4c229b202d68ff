package workers

import (
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Entry is one worker of agnx.yaml's workers: section, by the name the
// supervising agent calls it: a coding agent over ACP (ACP, its argv) or
// Claude Code's headless CLI (Claude, the binary), exactly one of them.
type Entry struct {
	// ACP is the command line of a coding agent that speaks ACP on its
	// stdin and stdout, e.g. [claude-code-acp] or [gemini,
	// --experimental-acp]; Claude is the claude binary, run as Claude
	// Code's headless CLI. Exactly one of them; the program is on PATH or
	// an absolute path.
	ACP    []string `yaml:"acp"`
	Claude string   `yaml:"claude"`
	// Args are extra arguments for Claude (the ACP argv carries its own).
	Args []string `yaml:"args"`
	// Network lets the worker reach the network from its own netns.
	Network bool `yaml:"network"`
	// Timeout bounds one run ("30m"; 10s..24h, default 30m).
	Timeout string `yaml:"timeout"`
	// MaxRetries is how often the supervisor may reject with feedback
	// and have the worker try again (0..5, default 2).
	MaxRetries *int `yaml:"max_retries"`
	// Env is the only environment the worker gets besides PATH, HOME and
	// LANG; values may use ${VAR} (expanded when the config is read).
	Env map[string]string `yaml:"env"`
	// Sandbox is bwrap (default) or trust.
	Sandbox string `yaml:"sandbox"`

	// RunTimeout and Retries are Timeout and MaxRetries with their
	// defaults, set by Check.
	RunTimeout time.Duration `yaml:"-"`
	Retries    int           `yaml:"-"`
}

// Bounds and defaults of an entry.
const (
	MinTimeout        = 10 * time.Second
	MaxTimeout        = 24 * time.Hour
	DefaultTimeout    = 30 * time.Minute
	DefaultMaxRetries = 2
	MaxMaxRetries     = 5
	maxEntries        = 32
	maxArgv           = 64
	maxArgLen         = 4 << 10
	maxEnv            = 64
)

// LogValue leaves the env's values out of logs: they carry tokens.
func (e Entry) LogValue() slog.Value {
	return slog.GroupValue(slog.Any("acp", e.ACP), slog.String("claude", e.Claude),
		slog.Bool("network", e.Network), slog.Duration("timeout", e.RunTimeout),
		slog.Any("env", slices.Sorted(maps.Keys(e.Env))))
}

// FieldError is a problem with one key of an entry: Key is the path
// below the entry ("timeout", "acp"), "" for the entry itself.
type FieldError struct {
	Key string
	Msg string
}

func (e *FieldError) Error() string { return e.Msg }

// ValidName reports whether name may name a worker: [a-z0-9_-]{1,32}.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckAll checks every entry in name order and fills in defaults; the
// error says which entry (workers.<name>) and key.
func CheckAll(entries map[string]Entry) (name string, err *FieldError) {
	if len(entries) > maxEntries {
		return "", &FieldError{Msg: fmt.Sprintf("workers has %d entries; keep it to %d", len(entries), maxEntries)}
	}
	for _, n := range slices.Sorted(maps.Keys(entries)) {
		e := entries[n]
		if err := e.Check(n); err != nil {
			return n, err
		}
		entries[n] = e
	}
	return "", nil
}

// Check validates e, the entry called name, and sets RunTimeout and
// Retries.
func (e *Entry) Check(name string) *FieldError {
	p := "workers." + name
	if !ValidName(name) {
		return &FieldError{Msg: fmt.Sprintf("worker name %q may contain only a-z, 0-9, _ and -, at most 32 of them", clip(name))}
	}
	if err := e.checkCommand(p); err != nil {
		return err
	}
	e.RunTimeout = DefaultTimeout
	if e.Timeout != "" {
		d, err := time.ParseDuration(e.Timeout)
		if err != nil || d < MinTimeout || d > MaxTimeout {
			return &FieldError{Key: "timeout", Msg: fmt.Sprintf("%s.timeout %q must be a duration from 10s to 24h, e.g. 30m", p, clip(e.Timeout))}
		}
		e.RunTimeout = d
	}
	e.Retries = DefaultMaxRetries
	if e.MaxRetries != nil {
		if *e.MaxRetries < 0 || *e.MaxRetries > MaxMaxRetries {
			return &FieldError{Key: "max_retries", Msg: fmt.Sprintf("%s.max_retries %d is out of range 0..%d", p, *e.MaxRetries, MaxMaxRetries)}
		}
		e.Retries = *e.MaxRetries
	}
	switch e.Sandbox {
	case "":
		e.Sandbox = "bwrap"
	case "bwrap", "trust":
	default:
		return &FieldError{Key: "sandbox", Msg: fmt.Sprintf("%s.sandbox %q must be bwrap or trust", p, clip(e.Sandbox))}
	}
	return e.checkEnv(p)
}

func (e *Entry) checkCommand(p string) *FieldError {
	switch {
	case len(e.ACP) > 0 && e.Claude != "":
		return &FieldError{Msg: fmt.Sprintf("%s has both acp and claude: keep one (acp: the argv of an ACP agent, claude: the claude binary)", p)}
	case len(e.ACP) == 0 && e.Claude == "":
		return &FieldError{Msg: fmt.Sprintf("%s needs acp (the argv of an ACP agent, e.g. [claude-code-acp]) or claude (the claude binary, e.g. claude)", p)}
	case len(e.ACP) > 0 && len(e.Args) > 0:
		return &FieldError{Key: "args", Msg: fmt.Sprintf("%s.args is for claude: put an ACP agent's arguments in acp after the program", p)}
	case len(e.ACP)+len(e.Args) > maxArgv:
		return &FieldError{Key: "args", Msg: fmt.Sprintf("%s has over %d arguments: keep fewer", p, maxArgv)}
	}
	key, prog := "acp", e.Claude
	if e.Claude != "" {
		key = "claude"
	} else {
		prog = e.ACP[0]
	}
	if prog == "" || !filepath.IsAbs(prog) && strings.ContainsRune(prog, '/') {
		return &FieldError{Key: key, Msg: fmt.Sprintf("%s.%s must name a program on PATH or by its absolute path", p, key)}
	}
	for _, a := range append(append([]string{prog}, e.ACP...), e.Args...) {
		if len(a) > maxArgLen || containsNUL(a) {
			return &FieldError{Key: key, Msg: fmt.Sprintf("%s.%s has an argument over %d bytes or with a NUL byte: fix it", p, key, maxArgLen)}
		}
	}
	return nil
}

func (e *Entry) checkEnv(p string) *FieldError {
	if len(e.Env) > maxEnv {
		return &FieldError{Key: "env", Msg: fmt.Sprintf("%s.env has %d variables; keep it to %d", p, len(e.Env), maxEnv)}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		if !envName(k) {
			return &FieldError{Key: "env", Msg: fmt.Sprintf("%s.env name %q must be letters, digits and _, not starting with a digit", p, clip(k))}
		}
		if v := e.Env[k]; len(v) > maxArgLen || containsNUL(v) {
			return &FieldError{Key: "env." + k, Msg: fmt.Sprintf("%s.env.%s is over %d bytes or has a NUL byte: fix it", p, k, maxArgLen)}
		}
	}
	return nil
}

func envName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func containsNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// clip cuts s for an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
