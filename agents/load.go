package agents

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// FileName is the name of the spec file in an agent's folder.
const FileName = "agent.yaml"

// maxFileSize bounds agent.yaml and each prompt file: they are read whole
// into memory on small machines.
const maxFileSize = 1 << 20

// agentFile is agent.yaml as written. Defaults are filled in before decoding
// so that keys absent from the file keep them.
type agentFile struct {
	// APIVersion is agnx/v1alpha1 or duragent/v1alpha1 (required).
	APIVersion string `yaml:"apiVersion"`
	// Kind is Agent (required).
	Kind string `yaml:"kind"`
	// Metadata names and describes the agent.
	Metadata metadata `yaml:"metadata"`
	Spec     spec     `yaml:"spec"`

	// warnings are what validate found odd but not wrong.
	warnings []string
}

type metadata struct {
	// Name is the agent's name: letters, digits and hyphens (required).
	Name string `yaml:"name"`
	// Description, Version and Labels describe the agent; the HTTP API's
	// agent endpoints show them.
	Description string            `yaml:"description"`
	Version     string            `yaml:"version"`
	Labels      map[string]string `yaml:"labels"`
}

type spec struct {
	// Model is the model that answers (its provider and name are
	// required).
	Model modelFile `yaml:"model"`
	// Soul, SystemPrompt and Instructions name the prompt files, relative
	// to the agent's folder; unset: SOUL.md, SYSTEM_PROMPT.md and
	// INSTRUCTIONS.md, when they exist. A named file that is missing is a
	// warning, and the prompt goes without it.
	Soul         string `yaml:"soul"`
	SystemPrompt string `yaml:"system_prompt"`
	Instructions string `yaml:"instructions"`
	// Session is how the agent's sessions and turns run: their limits,
	// timeouts and context window.
	Session Session `yaml:"session"`
	// Access is who may talk to the agent, and how it answers in groups.
	Access Access `yaml:"access"`
	// Memory, present (memory: {} is enough), gives the agent the memory
	// tool and directive, as in Agnx; nil when absent.
	Memory *Memory `yaml:"memory"`
	// Tools are the agent's tools: built-in ones, cli programs, WASM
	// modules and MCP servers.
	Tools []ToolRef `yaml:"tools"`
	// SkillsDir is the folder of the agent's skills, relative to its
	// folder (default skills).
	SkillsDir string `yaml:"skills_dir"`
	// Hooks are guards that run before a tool call and steering messages
	// added after one.
	Hooks Hooks `yaml:"hooks"`
	// Heartbeat is the agent's periodic turn: every so often, within its
	// active hours, the agent gets its instructions in a session of its
	// own, and what it answers is delivered unless it says there is
	// nothing to tell. HEARTBEAT.md in the folder alone turns it on too;
	// nil when absent.
	Heartbeat *heartbeatFile `yaml:"heartbeat"`
	// Notify is when the agent notifies of a turn's end, and where its
	// notifications go (an agnx-lite extension).
	Notify NotifySettings `yaml:"notify"`
}

// modelFile is spec.model as written: Model and its one alias key.
type modelFile struct {
	Model `yaml:",inline"`
	// MaxTokens is the older name of max_output_tokens.
	MaxTokens int `yaml:"max_tokens"`
}

// The defaults of spec.session, set by Load when agent.yaml leaves a field
// out. The runtime falls back to the same ones for an agent that was not
// built by Load (its fields are zero).
const (
	DefaultOnDisconnect         = OnDisconnectPause
	DefaultMaxToolIterations    = 10
	DefaultLLMTimeoutSeconds    = 300
	DefaultMaxHistoryTokens     = 40000
	DefaultMaxToolResultTokens  = 8000
	DefaultToolResultTruncation = "head"
	DefaultToolResultKeepFirst  = 2
	DefaultToolResultKeepLast   = 5
)

func defaultAgentFile() agentFile {
	return agentFile{Spec: spec{
		Session: Session{
			OnDisconnect:      DefaultOnDisconnect,
			MaxToolIterations: DefaultMaxToolIterations,
			LLMTimeoutSeconds: DefaultLLMTimeoutSeconds,
			Context: Context{
				MaxHistoryTokens:     DefaultMaxHistoryTokens,
				MaxToolResultTokens:  DefaultMaxToolResultTokens,
				ToolResultTruncation: DefaultToolResultTruncation,
				ToolResultKeepFirst:  DefaultToolResultKeepFirst,
				ToolResultKeepLast:   DefaultToolResultKeepLast,
			},
		},
		Access: DefaultAccess(),
	}}
}

// Load reads and validates the agent in dir: dir/agent.yaml and the prompt
// files it names (or SOUL.md, SYSTEM_PROMPT.md and INSTRUCTIONS.md when it
// names none and they exist). A problem in a file is an *Error giving its
// file and line; a missing agent.yaml wraps fs.ErrNotExist. Every file is
// read through an os.Root on dir: a file named by a path or a symlink that
// leads out of the folder is refused (see [ErrOutside]).
func Load(dir string) (*Agent, error) {
	file := filepath.Join(dir, FileName)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("load agent: %w", err)
	}
	defer root.Close()
	data, mod, err := readInside(root, FileName)
	if errors.Is(err, ErrOutside) {
		return nil, &Error{File: file, Msg: "is a link that " + ErrOutside.Error() + outsideFix}
	}
	if errors.Is(err, ErrNotRegular) {
		return nil, &Error{File: file, Msg: ErrNotRegular.Error() + notRegularFix}
	}
	if errors.Is(err, ErrTooLarge) {
		return nil, &Error{File: file, Msg: ErrTooLarge.Error() + tooLargeFix}
	}
	if err != nil {
		return nil, fmt.Errorf("load agent: %w", err)
	}
	af, doc, err := parseAgent(file, data)
	if err != nil {
		return nil, err
	}
	a := af.agent(dir)
	for i := range a.Tools {
		a.toolLines = append(a.toolLines, doc.Line("spec.tools["+strconv.Itoa(i)+"].name"))
	}
	a.Warnings = append(Warnings(doc), af.warnings...)
	a.Files = []string{dir, file}
	a.ModTime = mod
	if info, err := os.Stat(dir); err == nil && info.ModTime().After(mod) {
		a.ModTime = info.ModTime()
	}
	if err := a.loadPrompts(root, doc, &af.Spec); err != nil {
		return nil, err
	}
	if err := a.loadHeartbeat(root, doc, af.Spec.Heartbeat); err != nil {
		return nil, err
	}
	if err := checkToolFiles(root, doc, a.Tools); err != nil {
		return nil, err
	}
	a.loadSkills(root, skillsRel(&af.Spec))
	a.loadDirectives(root)
	return a, nil
}

// Validate loads the agent in dir and reports what Load would reject. It
// does not build the agent's tools or policy; "agnx-lite agent validate"
// builds the whole agent as the daemon does (lite.ValidateAgents).
func Validate(dir string) error {
	_, err := Load(dir)
	return err
}

// parseAgent decodes and validates agent.yaml without touching the disk.
func parseAgent(file string, data []byte) (*agentFile, *Doc, error) {
	doc, err := ParseYAML(file, data)
	if err != nil {
		return nil, nil, err
	}
	if doc.Empty() {
		return nil, nil, &Error{File: file, Line: 1, Msg: "the file is empty; it needs apiVersion, kind, metadata and spec"}
	}
	af := defaultAgentFile()
	if err := doc.Decode(&af); err != nil {
		return nil, nil, err
	}
	if err := af.validate(doc); err != nil {
		return nil, nil, doc.Explain(err)
	}
	return &af, doc, nil
}

func (af *agentFile) agent(dir string) *Agent {
	s := &af.Spec
	return &Agent{
		Name:        af.Metadata.Name,
		Description: af.Metadata.Description,
		Version:     af.Metadata.Version,
		Labels:      af.Metadata.Labels,
		APIVersion:  af.APIVersion,
		Dir:         dir,
		Model:       s.Model.Model,
		Session:     s.Session,
		Access:      s.Access,
		Memory:      s.memory(),
		Tools:       s.Tools,
		SkillsDir:   resolve(dir, skillsRel(s)),
		Hooks:       s.Hooks,
		Notify:      s.Notify,
	}
}

// loadPrompts reads the three prompt parts. A file named in agent.yaml
// that does not exist is a warning; a conventional file (SOUL.md, ...) is
// used only when it exists.
func (a *Agent) loadPrompts(root *os.Root, doc *Doc, s *spec) error {
	parts := []struct {
		path, ref, conventional string
		dst                     *string
	}{
		{"spec.soul", s.Soul, "SOUL.md", &a.Soul},
		{"spec.system_prompt", s.SystemPrompt, "SYSTEM_PROMPT.md", &a.SystemPrompt},
		{"spec.instructions", s.Instructions, "INSTRUCTIONS.md", &a.Instructions},
	}
	for _, p := range parts {
		name := p.ref
		if name == "" {
			name = p.conventional
		}
		file := resolve(a.Dir, name)
		data, mod, err := readInside(root, name)
		switch {
		case err == nil:
			*p.dst = string(data)
			a.Files = append(a.Files, file)
			if mod.After(a.ModTime) {
				a.ModTime = mod
			}
		case errors.Is(err, fs.ErrNotExist) && p.ref == "":
			// no conventional file: the part is empty
		case errors.Is(err, fs.ErrNotExist):
			// Agnx loads the agent without the part; so does Load.
			a.Warnings = append(a.Warnings, doc.Errorf(p.path,
				"%s names %s, which does not exist, so the prompt goes without it; create the file or remove the key", p.path, p.ref).Error())
			a.Files = append(a.Files, file) // reload when it appears
		case errors.Is(err, ErrOutside) && p.ref == "":
			return &Error{File: file, Msg: "is a link that " + ErrOutside.Error() + outsideFix}
		case errors.Is(err, ErrOutside):
			return doc.Errorf(p.path, "%s %s is a link that %s%s", p.path, p.ref, ErrOutside, outsideFix)
		case errors.Is(err, ErrNotRegular) && p.ref == "":
			return &Error{File: file, Msg: ErrNotRegular.Error() + notRegularFix}
		case errors.Is(err, ErrNotRegular):
			return doc.Errorf(p.path, "%s %s %s%s", p.path, p.ref, ErrNotRegular, notRegularFix)
		default:
			return doc.Errorf(p.path, "%s: %v", p.path, err)
		}
	}
	return nil
}

// memory is spec.memory with its default backend: present means
// filesystem, as in Agnx.
func (s *spec) memory() Memory {
	if s.Memory == nil {
		return Memory{}
	}
	m := *s.Memory
	if m.Backend == "" {
		m.Backend = "filesystem"
	}
	return m
}

// skillsRel is spec.skills_dir, or the default "skills".
func skillsRel(s *spec) string {
	if s.SkillsDir == "" {
		return "skills"
	}
	return s.SkillsDir
}

// resolve makes a path from agent.yaml, which validation keeps local,
// relative to the agent's folder.
func resolve(dir, p string) string {
	return filepath.Join(dir, p)
}

// readFile reads a regular file of at most maxFileSize bytes, by its path
// (for files the user's own config names, such as policy.yaml tiers).
func readFile(name string) ([]byte, time.Time, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	return readOpen(f, name)
}

// readOpen reads f, which must be a regular file of at most maxFileSize
// bytes.
func readOpen(f *os.File, name string) ([]byte, time.Time, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !info.Mode().IsRegular() {
		return nil, time.Time{}, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(data) > maxFileSize {
		return nil, time.Time{}, fmt.Errorf("%s %w", name, ErrTooLarge)
	}
	return data, info.ModTime(), nil
}

// addFile adds a file or folder the agent was built from to Files, and its
// modification time to ModTime, so that a loader that compares the two
// rebuilds the agent only when one of them changes.
func (a *Agent) addFile(name string) {
	a.Files = append(a.Files, name)
	if st, err := os.Stat(name); err == nil && st.ModTime().After(a.ModTime) {
		a.ModTime = st.ModTime()
	}
}
