package toolset

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/mcp"
)

// MCPEntries are the MCP server entries an agent gets: agnx.yaml's
// mcp.servers, then its own spec.tools entries, an agent's entry winning
// over a global one of the same name. own tells which are the agent's.
func MCPEntries(cfg *config.Config, a *agents.Agent) (refs []agents.ToolRef, own []bool) {
	mine := map[string]bool{}
	for _, r := range a.Tools {
		if r.Type == "mcp" {
			mine[r.Name] = true
		}
	}
	for _, g := range cfg.MCP.Servers {
		if !mine[g.Name] {
			refs, own = append(refs, g), append(own, false)
		}
	}
	for _, r := range a.Tools {
		if r.Type == "mcp" {
			refs, own = append(refs, r), append(own, true)
		}
	}
	return refs, own
}

// MCPServer turns one entry into what the manager runs. An agent's own
// entry (own) is hostile input: its ${env:NAME} may name only sandbox.env's
// variables (and TZ, LANG, LC_ALL), its command and read_only paths stay
// inside its folder unless the operator allowed them. A global entry is the
// operator's and may name anything.
func MCPServer(cfg *config.Config, a *agents.Agent, ref agents.ToolRef, own bool) (mcp.Server, error) {
	s := mcp.Server{Name: ref.Name, Transport: ref.Transport, Command: ref.Command, Args: slices.Clone(ref.Args),
		Env: ref.Env.Map(), Network: ref.Network, URL: ref.URL, Headers: ref.Headers,
		IdleTimeout: config.Seconds(ref.IdleTimeoutSeconds, 0), CallTimeout: config.Seconds(ref.TimeoutSeconds, 0)}
	if s.Transport == "" {
		s.Transport = "http"
		if s.Command != "" {
			s.Transport = "stdio"
		}
	}
	where := "mcp server " + ref.Name
	if own {
		where += " (" + filepath.Join(a.Dir, agents.FileName) + ")"
		if err := checkEnvRefs(cfg, where, s); err != nil {
			return s, err
		}
	}
	if s.Command == "" {
		return s, nil
	}
	if err := resolveCommand(a, where, &s, own); err != nil {
		return s, err
	}
	for _, r := range ref.ReadOnly {
		p, err := readOnlyPath(cfg, a, where, r, own)
		if err != nil {
			return s, err
		}
		s.ReadOnly = append(s.ReadOnly, p)
	}
	return s, nil
}

// resolveCommand makes a stdio server's command a path or a bare program
// name: relative paths are files inside the agent's folder (its folder is
// then readable in the sandbox), absolute ones the operator's choice (as
// for cli tools), bare names a file of the folder when there is one, else a
// program on the sandbox's PATH (npx, node, uvx).
func resolveCommand(a *agents.Agent, where string, s *mcp.Server, own bool) error {
	prog := s.Command
	if filepath.IsAbs(prog) {
		st, err := os.Stat(prog)
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s: %s is not an executable file: check its command and the file's permissions (chmod +x)", where, prog)
		}
		s.ReadOnly = append(s.ReadOnly, prog)
		return nil
	}
	if !own {
		return nil // validated: a bare name on PATH
	}
	if !filepath.IsLocal(prog) {
		return fmt.Errorf("%s: %s %v: a server's command is a program on PATH, an absolute path or a file inside the agent's folder", where, prog, agents.ErrOutside)
	}
	st, err := a.StatFile(prog)
	switch {
	case !strings.ContainsRune(prog, '/') && errors.Is(err, fs.ErrNotExist):
		return nil // a program on the sandbox's PATH
	case errors.Is(err, agents.ErrOutside):
		return fmt.Errorf("%s: %s %v: a server may run only a file inside its agent's folder", where, prog, agents.ErrOutside)
	case err != nil || st.IsDir() || st.Mode()&0o111 == 0:
		return fmt.Errorf("%s: %s is not an executable file: check its command and the file's permissions (chmod +x)", where, filepath.Join(a.Dir, prog))
	}
	s.Command = filepath.Join(a.Dir, prog)
	s.ReadOnly = append(s.ReadOnly, a.Dir)
	return nil
}

// readOnlyPath resolves one read_only entry: relative ones inside the
// agent's folder; an agent's absolute ones only under agnx.yaml's
// mcp.read_only.
func readOnlyPath(cfg *config.Config, a *agents.Agent, where, r string, own bool) (string, error) {
	if !filepath.IsAbs(r) {
		p := filepath.Join(a.Dir, r)
		real, err := filepath.EvalSymlinks(p)
		root, rerr := filepath.EvalSymlinks(a.Dir)
		if err != nil || rerr != nil || !inside(root, real) {
			return "", fmt.Errorf("%s: read_only %s is not a path inside the agent's folder: fix read_only", where, p)
		}
		return real, nil
	}
	if !own {
		return r, nil
	}
	for _, allowed := range cfg.MCP.ReadOnly {
		if inside(filepath.Clean(allowed), filepath.Clean(r)) {
			return r, nil
		}
	}
	return "", fmt.Errorf("%s: read_only %s is outside the agent's folder: to let agents' servers read it, add it (or a folder above it) to mcp.read_only in agnx.yaml", where, r)
}

// checkEnvRefs refuses an agent's entry whose env or headers values name a
// variable the operator did not offer in sandbox.env: an imported agent
// must not be able to send the daemon's secrets to a server it chose.
func checkEnvRefs(cfg *config.Config, where string, s mcp.Server) error {
	offered := map[string]bool{}
	for k := range cfg.Sandbox.Env {
		offered[k] = true
	}
	for _, k := range harmlessEnv {
		offered[k] = true
	}
	for _, field := range []struct {
		what string
		m    map[string]string
	}{{"env", s.Env}, {"headers", s.Headers}} {
		for _, k := range slices.Sorted(maps.Keys(field.m)) {
			for _, name := range envRefs(field.m[k]) {
				if !offered[name] {
					return fmt.Errorf("%s: %s %s names the variable %s, which sandbox.env in agnx.yaml does not offer: "+
						"to allow it, add %s: ${%s} under sandbox.env in agnx.yaml, or remove it from the entry", where, field.what, k, name, name, name)
				}
			}
		}
	}
	return nil
}

// envRefs lists the variables a value refers to, however it does:
// ${env:NAME}, ${NAME} (with or without a :-default) and $NAME. It errs
// on the side of finding too many: anything it finds must be offered.
func envRefs(v string) []string {
	var out []string
	for i := 0; i < len(v); i++ {
		if v[i] != '$' || i+1 == len(v) {
			continue
		}
		rest := v[i+1:]
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				end = len(rest)
			}
			ref := strings.TrimPrefix(rest[1:end], "env:")
			name, _, _ := strings.Cut(ref, ":")
			out = append(out, name)
			continue
		}
		n := 0
		for n < len(rest) && (rest[n] == '_' || rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] >= 'a' && rest[n] <= 'z' ||
			n > 0 && rest[n] >= '0' && rest[n] <= '9') {
			n++
		}
		if n > 0 {
			out = append(out, rest[:n])
		}
	}
	return out
}
