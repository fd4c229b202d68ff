package wasmtools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
)

// ManifestName is the file that describes a WASM tool, next to its module.
const ManifestName = "tool.yaml"

// Workspace access a manifest may grant.
const (
	WorkspaceNone = "none"
	WorkspaceRO   = "ro"
	WorkspaceRW   = "rw"
)

// Defaults and ceilings of the manifest's limits.
const (
	DefaultMemoryMB = 64
	MaxMemoryMB     = 1024
	DefaultTimeout  = 30 * time.Second
	MaxTimeout      = 10 * time.Minute
	DefaultOutputKB = 256
	MaxOutputKB     = 16 << 10
)

// maxManifestSize keeps a stray large file from being parsed as YAML.
const maxManifestSize = 256 << 10

// Manifest is a parsed, validated tool.yaml.
type Manifest struct {
	// File is the manifest's path as given to LoadManifest or ParseManifest.
	File        string
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments, as JSON text; always an
	// object schema.
	Schema []byte
	// Module is the .wasm path relative to the manifest's folder; "" means
	// "<name>.wasm", else "tool.wasm" (see [Manifest.ModulePath]).
	Module    string
	Limits    Limits
	Workspace string
	// Env names the variables copied from ToolOptions.Env, and only them.
	Env []string
}

// Limits bound one call of a tool.
type Limits struct {
	MemoryMB int
	Timeout  time.Duration
	OutputKB int
}

// manifestFile is tool.yaml as written; the zero values of Manifest that
// need defaults are filled in after decoding.
type manifestFile struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Schema      map[string]any `yaml:"schema"`
	Module      string         `yaml:"module"`
	Limits      struct {
		MemoryMB *int   `yaml:"memory_mb"`
		Timeout  string `yaml:"timeout"`
		OutputKB *int   `yaml:"output_kb"`
	} `yaml:"limits"`
	Workspace string   `yaml:"workspace"`
	Env       []string `yaml:"env"`
}

// validName reports whether s suits every provider's tool-name rules
// (^[A-Za-z0-9_-]{1,64}$). No regexp: nothing is compiled at init.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !alnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// validEnv reports whether s is a portable environment variable name.
func validEnv(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !alnum(c) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// LoadManifest reads and parses the manifest at path.
func LoadManifest(path string) (*Manifest, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &agents.Error{File: path, Msg: fmt.Sprintf("cannot read the tool manifest: %v", err)}
	}
	if st.Size() > maxManifestSize {
		return nil, &agents.Error{File: path, Msg: fmt.Sprintf("the tool manifest is larger than %d KiB", maxManifestSize>>10)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &agents.Error{File: path, Msg: fmt.Sprintf("cannot read the tool manifest: %v", err)}
	}
	return ParseManifest(path, data)
}

// ParseManifest parses data, the text of the manifest file. Every problem
// is an *agents.Error, "file:line: msg".
func ParseManifest(file string, data []byte) (*Manifest, error) {
	doc, err := agents.ParseYAML(file, data)
	if err != nil {
		return nil, err
	}
	if doc.Empty() {
		return nil, &agents.Error{File: file, Line: 1, Msg: "the tool manifest is empty: it needs at least name and description"}
	}
	var mf manifestFile
	if err := doc.Decode(&mf); err != nil {
		return nil, err
	}
	if err := doc.Strict(); err != nil {
		return nil, err // agnx-lite's own format: a misspelt capability must not pass
	}
	m := &Manifest{File: file, Name: mf.Name, Description: mf.Description, Module: mf.Module,
		Workspace: mf.Workspace, Env: mf.Env}
	checks := []func(*agents.Doc, *manifestFile, *Manifest) error{checkIdentity, checkSchema, checkLimits, checkAccess}
	for _, check := range checks {
		if err := check(doc, &mf, m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ModulePath is where the module should be: Module, else the first of
// "<name>.wasm" and "tool.wasm" that exists, next to the manifest.
func (m *Manifest) ModulePath() string {
	dir := filepath.Dir(m.File)
	if m.Module != "" {
		return filepath.Join(dir, m.Module)
	}
	p := filepath.Join(dir, m.Name+".wasm")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return filepath.Join(dir, "tool.wasm")
}

func checkIdentity(doc *agents.Doc, mf *manifestFile, m *Manifest) error {
	switch {
	case m.Name == "":
		return doc.Errorf("name", "name is required")
	case !validName(m.Name):
		return doc.Errorf("name", "name %q may hold only letters, digits, _ and - (at most 64)", m.Name)
	case m.Description == "":
		return doc.Errorf("description", "description is required: the model reads it to know when to call the tool")
	case m.Module != "" && (!filepath.IsLocal(m.Module) || filepath.Ext(m.Module) != ".wasm"):
		return doc.Errorf("module", "module must be a .wasm file inside the tool's folder, such as %s.wasm", m.Name)
	}
	return nil
}

func checkSchema(doc *agents.Doc, mf *manifestFile, m *Manifest) error {
	if mf.Schema == nil {
		m.Schema = []byte(`{"type":"object","properties":{}}`)
		return nil
	}
	if t, _ := mf.Schema["type"].(string); t != "object" {
		return doc.Errorf("schema", "schema must describe an object (type: object), as tool arguments are a JSON object")
	}
	js, err := json.Marshal(mf.Schema)
	if err != nil {
		return doc.Errorf("schema", "schema cannot be written as JSON: %v", err)
	}
	m.Schema = js
	return nil
}

func checkLimits(doc *agents.Doc, mf *manifestFile, m *Manifest) error {
	m.Limits = Limits{MemoryMB: DefaultMemoryMB, Timeout: DefaultTimeout, OutputKB: DefaultOutputKB}
	if p := mf.Limits.MemoryMB; p != nil {
		if *p < 1 || *p > MaxMemoryMB {
			return doc.Errorf("limits.memory_mb", "limits.memory_mb must be between 1 and %d", MaxMemoryMB)
		}
		m.Limits.MemoryMB = *p
	}
	if s := mf.Limits.Timeout; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > MaxTimeout {
			return doc.Errorf("limits.timeout", "limits.timeout must be a duration such as \"30s\" or \"2m\", at most %s", MaxTimeout)
		}
		m.Limits.Timeout = d
	}
	if p := mf.Limits.OutputKB; p != nil {
		if *p < 1 || *p > MaxOutputKB {
			return doc.Errorf("limits.output_kb", "limits.output_kb must be between 1 and %d", MaxOutputKB)
		}
		m.Limits.OutputKB = *p
	}
	return nil
}

func checkAccess(doc *agents.Doc, mf *manifestFile, m *Manifest) error {
	switch m.Workspace {
	case "":
		m.Workspace = WorkspaceNone
	case WorkspaceNone, WorkspaceRO, WorkspaceRW:
	default:
		return doc.Errorf("workspace", "workspace must be none, ro or rw, not %q", m.Workspace)
	}
	for i, name := range m.Env {
		path := fmt.Sprintf("env[%d]", i)
		if !validEnv(name) {
			return doc.Errorf(path, "env lists variable names; %q is not one", name)
		}
		if slices.Contains(m.Env[:i], name) {
			return doc.Errorf(path, "env lists %s twice", name)
		}
	}
	return nil
}
