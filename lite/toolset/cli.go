package toolset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
)

// Limits of CLI tools and their discovery: folders are the agent's (and
// its workspace, which the model writes), so hostile input.
const (
	maxReadmeBytes     = 64 << 10 // of a README read into a description
	maxDiscoveredTools = 64       // per tools/ folder
)

// cli builds a declared CLI tool (type: cli). Its command is a command
// line (program and fixed arguments, split shell-style, run without a
// shell) whose program is
//   - a relative path (./tools/x.sh): a file inside the agent's folder; one
//     leading outside is refused;
//   - an absolute path: as Agnx allows, the operator's choice; it must be
//     an executable file, and only that file is bound into the sandbox;
//   - a bare name: a file of the agent's folder when there is one (as lite
//     always read it), else a program on the sandbox's PATH (jq).
//
// It runs with the agent's folder (read-only) as its working directory.
func (f *Factory) cli(a *agents.Agent, ref agents.ToolRef) (runtime.Tool, error) {
	words, err := tools.SplitArgs(ref.Command)
	if err != nil || len(words) == 0 {
		return nil, fmt.Errorf("cli tool %q: its command %q cannot be read (%v): fix spec.tools command", ref.Name, ref.Command, err)
	}
	if ref.Input != "" && ref.Input != "json" {
		return nil, fmt.Errorf("cli tool %q: input %q is not known: leave it out (args as words) or write input: json", ref.Name, ref.Input)
	}
	t := &tools.CLI{Name: ref.Name, Dir: a.Dir, ReadOnly: []string{a.Dir}, JSONInput: ref.Input == "json",
		Sandbox: f.sandboxes.ForAgent(a, ref.Network), Timeout: config.Seconds(ref.TimeoutSeconds, tools.DefaultTimeout)}
	prog := words[0]
	switch {
	case filepath.IsAbs(prog):
		st, err := os.Stat(prog)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, f.missingCommand(a, ref, prog)
		}
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("cli tool %q: %s is not an executable file: check spec.tools command and its permissions (chmod +x)", ref.Name, prog)
		}
		t.ReadOnly = append(t.ReadOnly, prog)
	default:
		// A path, or a bare name that names a file of the folder (lite
		// always took it so): a file inside the folder.
		if !filepath.IsLocal(prog) {
			return nil, fmt.Errorf("cli tool %q: %s %v: a tool may run only a file inside its agent's folder", ref.Name, prog, agents.ErrOutside)
		}
		st, err := a.StatFile(prog)
		if !strings.ContainsRune(prog, '/') && errors.Is(err, fs.ErrNotExist) {
			break // a program on the sandbox's PATH
		}
		if errors.Is(err, agents.ErrOutside) {
			return nil, fmt.Errorf("cli tool %q: %s %v: a tool may run only a file inside its agent's folder", ref.Name, prog, agents.ErrOutside)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, f.missingCommand(a, ref, filepath.Join(a.Dir, prog))
		}
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("cli tool %q: %s is not an executable file: check spec.tools command and its permissions (chmod +x)",
				ref.Name, filepath.Join(a.Dir, prog))
		}
		prog = filepath.Join(a.Dir, prog)
	}
	t.Command = append(append([]string{prog}, words[1:]...), ref.Args...)
	t.Description = f.cliDescription(a, ref)
	if t.Env, err = f.cliEnv(ref); err != nil {
		return nil, err
	}
	return t, nil
}

// missingCommand leaves out a cli tool whose program does not exist, with
// a warning, as Agnx loads such an agent (its calls fail): the file joins
// the agent's Files, so that the agent is rebuilt with the tool once the
// file is there. It returns nil: no error, no tool.
func (f *Factory) missingCommand(a *agents.Agent, ref agents.ToolRef, prog string) error {
	w := fmt.Sprintf("cli tool %q: %s does not exist, so the agent runs without the tool until it does: create it or fix spec.tools command", ref.Name, prog)
	f.log.Warn(w, "agent", a.Name)
	a.Warnings = append(a.Warnings, w)
	a.Files = append(a.Files, prog)
	return nil
}

// cliEnv is what a cli tool's env: names pick from the operator's
// sandbox.env and the daemon's TZ, LANG and LC_ALL.
func (f *Factory) cliEnv(ref agents.ToolRef) (map[string]string, error) {
	if ref.Env.Len() == 0 {
		return nil, nil
	}
	offered := environ(f.env, os.LookupEnv)
	env := make(map[string]string, len(ref.Env.Names))
	for _, k := range ref.Env.Names {
		v, ok := offered[k]
		if !ok {
			return nil, fmt.Errorf("cli tool %q: env names %s, which sandbox.env in the configuration does not have: add it there or remove it from the tool's env", ref.Name, k)
		}
		env[k] = v
	}
	return env, nil
}

// cliDescription is Agnx's: the description, then the README after a
// blank line, or "CLI tool: <name>". A README that cannot be read is left
// out with a warning, as Agnx does.
func (f *Factory) cliDescription(a *agents.Agent, ref agents.ToolRef) string {
	desc := ref.Description
	if desc == "" {
		desc = "CLI tool: " + ref.Name
	}
	if ref.Readme == "" {
		return desc
	}
	data, err := a.ReadFile(ref.Readme)
	if err != nil {
		w := fmt.Sprintf("cli tool %q: its readme %s cannot be read (%v), so the model does not see it: fix spec.tools readme",
			ref.Name, filepath.Join(a.Dir, ref.Readme), err)
		f.log.Warn(w, "agent", a.Name)
		a.Warnings = append(a.Warnings, w)
		return desc
	}
	if len(data) > maxReadmeBytes {
		data = data[:maxReadmeBytes]
	}
	return desc + "\n\n" + strings.ToValidUTF8(string(data), "\uFFFD")
}

// cliScan is one scan of an agent's tool folders.
type cliScan struct {
	tools []runtime.Tool
	scan  tools.ToolScan
	// watch are the paths whose times tell that the scan is out of date:
	// the tools/ folders (missing ones too), each tool's folder, README.
	watch []string
	warns []string
}

// discoverCLI finds the CLI tools in <folder>/tools/<name>/ and <data
// dir>/tools/<name>/ (Agnx's {workspace}/tools, shared by every agent): a
// folder with an executable file run or run.* (and no tool.yaml: that is a
// WASM tool). The agent's folder wins over the shared one, and a name
// taken (declared tools) over both. A tool runs in its own folder; its
// README.md is its description. Both folders are the operator's: the
// agent's file workspace, which the model writes, is never scanned, so a
// file the model makes never becomes a tool by itself.
func (f *Factory) discoverCLI(a *agents.Agent, taken map[string]bool) cliScan {
	var s cliScan
	seen := map[string]bool{}
	for k := range taken {
		seen[k] = true
	}
	f.scanTools(a, &s, seen, a.Dir)
	if f.shared != "" {
		f.scanTools(a, &s, seen, f.shared)
	}
	return s
}

// scanTools scans base/tools.
func (f *Factory) scanTools(a *agents.Agent, s *cliScan, seen map[string]bool, base string) {
	dir := filepath.Join(base, "tools")
	s.watch = append(s.watch, dir)
	s.scan.Dirs = append(s.scan.Dirs, dir)
	root, err := filepath.EvalSymlinks(base)
	if err != nil {
		return
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return // no tools/ folder
	}
	if !inside(root, real) {
		s.warn(f, a, fmt.Sprintf("%s is a link that leads out of its folder, so no tools are taken from it: make it a real folder", dir))
		return
	}
	if base == f.shared {
		// the data dir holds the database and agnx.env: a shared tool's
		// files must stay inside tools/
		root = real
	}
	d, err := os.Open(real)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(4 * maxDiscoveredTools)
	d.Close()
	slices.Sort(names)
	found := 0
	for _, name := range names {
		if !agents.PlainName(name, true) || seen[strings.ToLower(name)] {
			continue
		}
		if found == maxDiscoveredTools {
			s.warn(f, a, fmt.Sprintf("%s holds more than %d tools; the rest are left out: remove some", dir, maxDiscoveredTools))
			return
		}
		t, ok := f.toolFolder(a, s, root, filepath.Join(real, name), name)
		if ok {
			seen[strings.ToLower(name)] = true
			s.tools = append(s.tools, t)
			found++
		}
	}
}

// toolFolder builds the tool of one tools/<name>/ folder, if it is one.
func (f *Factory) toolFolder(a *agents.Agent, s *cliScan, root, dir, name string) (runtime.Tool, bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, false
	}
	if !inside(root, real) {
		s.warn(f, a, fmt.Sprintf("tool folder %s is a link that leads out of its folder, so it is left out: make it a real folder", dir))
		return nil, false
	}
	st, err := os.Stat(real)
	if err != nil || !st.IsDir() {
		return nil, false
	}
	s.watch = append(s.watch, dir, filepath.Join(dir, "README.md"))
	if _, err := os.Lstat(filepath.Join(real, "tool.yaml")); err == nil {
		return nil, false // a WASM tool
	}
	run := runFile(real)
	if run == "" {
		return nil, false
	}
	runReal, err := filepath.EvalSymlinks(filepath.Join(real, run))
	if err != nil || !inside(root, runReal) {
		s.warn(f, a, fmt.Sprintf("tool %s: %s is a link that leads out of its folder, so the tool is left out: make it a real file", name, filepath.Join(dir, run)))
		return nil, false
	}
	desc := "CLI tool: " + name
	if data := readBounded(filepath.Join(real, "README.md"), root); data != "" {
		desc = data
	}
	t := &tools.CLI{Name: name, Description: desc, Command: []string{"./" + run}, Dir: real, ReadOnly: []string{real},
		Sandbox: f.sandboxes.ForAgent(a, false)}
	s.scan.Tools = append(s.scan.Tools, tools.DiscoveredTool{Name: name, Description: desc})
	return t, true
}

// runFile is the name of the executable run or run.* in dir ("run"
// first), or "".
func runFile(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best := ""
	for _, e := range ents {
		n := e.Name()
		if n != "run" && !strings.HasPrefix(n, "run.") {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			continue
		}
		if best == "" || n == "run" || (best != "run" && n < best) {
			best = n
		}
	}
	return best
}

// readBounded reads at most maxReadmeBytes of a regular file inside root.
func readBounded(path, root string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || !inside(root, real) {
		return ""
	}
	fh, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(fh, maxReadmeBytes))
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// inside reports whether path is root or under it (both resolved).
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

func (s *cliScan) warn(f *Factory, a *agents.Agent, w string) {
	f.log.Warn(w, "agent", a.Name)
	s.warns = append(s.warns, w)
}
