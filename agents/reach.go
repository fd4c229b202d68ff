package agents

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strings"
)

// Reach is what an agent will reach once it runs: the model server its
// prompts and conversations go to, the executables it runs, the tools that
// reach the network. agent import shows it before installing an agent and
// refuses, unless trusted, one whose Risks are not empty.
type Reach struct {
	// Provider is spec.model.provider; ModelURL is where its requests go.
	Provider string
	ModelURL string
	// Commands are what the agent runs: CLI tools ("cli tool name:
	// command"), MCP servers, and bash.
	Commands []string
	// WASM are the WASM tools, listed in spec.tools or found in tools/.
	WASM []string
	// Network are the tools that reach the network.
	Network []string
	// Sessions are the ways its policy lets its conversations read each
	// other beyond the default (see SessionAccess.Wider).
	Sessions []string
	// Risks say, one phrase each, why the agent needs the user's trust:
	// a provider key sent to a server that is not the provider's, a model
	// server off this machine and network, executables, network access.
	Risks []string
}

// officialHosts are where the providers that take an API key live; a key
// sent to any other host is handed to whoever runs it.
var officialHosts = map[string]string{
	"openai":     "api.openai.com",
	"anthropic":  "api.anthropic.com",
	"openrouter": "openrouter.ai",
}

// defaultURLs are where each provider's requests go when spec.model has no
// base_url.
var defaultURLs = map[string]string{
	"ollama":     "http://127.0.0.1:11434 (or $OLLAMA_HOST)",
	"openai":     "https://api.openai.com/v1",
	"anthropic":  "https://api.anthropic.com",
	"openrouter": "https://openrouter.ai/api/v1",
}

// Reach describes what the agent will reach. It reads the names of the
// folders in tools/ to find WASM tools spec.tools does not list.
func (a *Agent) Reach() Reach {
	r := Reach{Provider: a.Model.Provider, ModelURL: a.Model.BaseURL}
	if r.ModelURL == "" {
		r.ModelURL = defaultURLs[a.Model.Provider]
	}
	r.Risks = modelRisks(a.Model)
	for _, t := range a.Tools {
		switch {
		case t.Type == "cli":
			r.Commands = append(r.Commands, "cli tool "+t.Name+": "+t.Command)
			r.Risks = append(r.Risks, fmt.Sprintf("runs the executable %s (cli tool %s)", t.Command, t.Name))
		case t.Type == "mcp":
			what := strings.TrimSpace(t.Command + " " + strings.Join(t.Args, " ") + " " + t.URL)
			r.Commands = append(r.Commands, "mcp server "+t.Name+": "+what)
			r.Risks = append(r.Risks, fmt.Sprintf("starts the MCP server %s (%s)", t.Name, what))
			if t.URL != "" {
				r.Network = append(r.Network, "mcp server "+t.Name+": "+t.URL)
			}
			if t.AllowPrivate {
				r.Risks = append(r.Risks, fmt.Sprintf("lets the MCP server %s's url reach this machine's and the local network's addresses (allow_private)", t.Name))
			}
		case t.Type == "wasm":
			r.WASM = append(r.WASM, t.Name)
		case t.Type == "builtin" && t.Name == "bash":
			r.Commands = append(r.Commands, "bash: the commands the model writes, in the sandbox")
		case t.Type == "builtin" && t.Name == "background_process":
			r.Commands = append(r.Commands, "background_process: the commands the model writes, in the sandbox, running in the background")
		case t.Type == "builtin" && t.Name == "web" && t.AllowPrivate:
			r.Network = append(r.Network, "web (private addresses too)")
			r.Risks = append(r.Risks, "lets the web tool reach this machine's and the local network's addresses (allow_private)")
		case t.Type == "builtin" && t.Name == "web":
			r.Network = append(r.Network, "web")
		}
		if t.Network {
			r.Network = append(r.Network, t.Name)
			r.Risks = append(r.Risks, fmt.Sprintf("asks for network access for %s", t.Name))
		}
	}
	r.WASM = append(r.WASM, a.unlistedWASM()...)
	return r
}

// modelRisks are the risks of spec.model: a provider key sent to a host
// that is not the provider's, or conversations sent to an Ollama server
// that is neither on this machine nor on the local network.
func modelRisks(m Model) []string {
	if m.BaseURL == "" {
		return nil
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil {
		return []string{fmt.Sprintf("sends its requests to %s, which is not a URL", m.BaseURL)}
	}
	if host, ok := officialHosts[m.Provider]; ok {
		if u.Scheme == "https" && strings.EqualFold(u.Hostname(), host) && (u.Port() == "" || u.Port() == "443") {
			return nil
		}
		return []string{fmt.Sprintf("sends your %s API key to %s (spec.model.base_url), not to %s", m.Provider, m.BaseURL, host)}
	}
	if !localHost(u.Hostname()) {
		return []string{fmt.Sprintf("sends your conversations to the Ollama server %s (spec.model.base_url), which is not on this machine or the local network", m.BaseURL)}
	}
	return nil
}

// localHost reports whether host is this machine or a private-network
// address, by its text alone (no name is resolved).
func localHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}

// unlistedWASM are the folders of tools/ that hold a tool.yaml and that no
// spec.tools entry names: the runtime loads them as WASM tools too.
func (a *Agent) unlistedWASM() []string {
	des, err := os.ReadDir(path.Join(a.Dir, "tools"))
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range des {
		if !d.IsDir() || a.listsTool(d.Name()) {
			continue
		}
		if _, err := a.StatFile(path.Join("tools", d.Name(), "tool.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
			out = append(out, d.Name())
		}
	}
	return out
}

func (a *Agent) listsTool(name string) bool {
	for _, t := range a.Tools {
		if t.Type == "wasm" && t.Name == name {
			return true
		}
	}
	return false
}

// Lines describe r for a person, one line per kind of reach.
func (r Reach) Lines() []string {
	lines := []string{"model server: " + r.Provider + " at " + r.ModelURL}
	add := func(label string, items []string) {
		if len(items) > 0 {
			lines = append(lines, label+": "+strings.Join(items, "; "))
		}
	}
	add("runs", r.Commands)
	add("wasm tools", r.WASM)
	add("network", r.Network)
	add("conversations", r.Sessions)
	return lines
}

// AddPolicy adds what the agent's policy p lets its conversations read
// beyond the default: each is a risk, since an agent from elsewhere that
// widens it lets one person's conversations reach another's.
func (r *Reach) AddPolicy(p *Policy) {
	w := p.Sessions.Wider()
	r.Sessions = append(r.Sessions, w...)
	r.Risks = append(r.Risks, w...)
}

// UntrustedError is Import's refusal of an agent whose Reach has risks
// when the user did not pass --trust. Nothing was installed.
type UntrustedError struct {
	Name  string
	Reach Reach
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("import: agent %s %s: re-run with --trust if you trust this agent", e.Name, strings.Join(e.Reach.Risks, "; "))
}
