package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
)

// initProviders are the providers init offers (agents.Model.Provider).
const initProviders = "ollama, openai, anthropic or openrouter"

// initModel is the default agent's spec.model as init's flags or prompts
// give it; empty fields keep the template's.
type initModel struct {
	Provider, Name, BaseURL string
}

// defaultModels are the model each provider starts with when only the
// provider is given.
var defaultModels = map[string]string{
	"ollama": "qwen3:1.7b", "openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-latest", "openrouter": "openai/gpt-4o-mini",
}

const maxModelField = 200

// validate checks what came from the command line or a prompt.
func (m *initModel) validate() error {
	if m.Provider == "" {
		if m.Name != "" || m.BaseURL != "" {
			return errors.New("--model and --base-url need --provider (" + initProviders + ")")
		}
		return nil
	}
	if _, ok := defaultModels[m.Provider]; !ok {
		return fmt.Errorf("--provider %q: use %s", m.Provider, initProviders)
	}
	if m.Name == "" {
		m.Name = defaultModels[m.Provider]
	}
	if len(m.Name) > maxModelField || strings.ContainsFunc(m.Name, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' }) {
		return fmt.Errorf("--model %q: give a model name without spaces or quotes (e.g. %s)", trunc(m.Name), defaultModels[m.Provider])
	}
	if m.BaseURL != "" {
		u, err := url.Parse(m.BaseURL)
		if err != nil || len(m.BaseURL) > maxModelField || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.ContainsAny(m.BaseURL, "\"\\ \t\r\n") {
			return fmt.Errorf("--base-url %q: give an http:// or https:// URL, e.g. http://192.168.1.10:11434", trunc(m.BaseURL))
		}
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// apply writes m into the agent.yaml the template just wrote: its
// provider, name and base_url lines, then loads the agent to be sure.
func (m initModel) apply(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	done := 0
	for i, l := range lines {
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(t, "provider: ") && done == 0:
			lines[i], done = "    provider: "+m.Provider+"          # ollama | openai | anthropic | openrouter", 1
		case strings.HasPrefix(t, "name: ") && done == 1 && strings.HasPrefix(l, "    "):
			lines[i], done = "    name: "+strconv.Quote(m.Name), 2
		case strings.HasPrefix(t, "# base_url: ") && done == 2:
			if m.BaseURL != "" {
				lines[i] = "    base_url: " + strconv.Quote(m.BaseURL)
			}
			done = 3
		}
	}
	if done != 3 {
		return fmt.Errorf("%s does not have the template's spec.model: set the provider and model there by hand", file)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		return err
	}
	a, err := agents.Load(strings.TrimSuffix(file, "/"+agents.FileName))
	if err != nil {
		return err
	}
	if a.Model.Provider != m.Provider || a.Model.Name != m.Name || a.Model.BaseURL != m.BaseURL {
		return fmt.Errorf("%s: spec.model did not take: set the provider and model there by hand", file)
	}
	return nil
}

// promptModel asks for the provider, model and URL on a terminal; an empty
// answer keeps the default shown. A bad answer is asked again; the end of
// input gives up.
func promptModel(in io.Reader, out io.Writer) (initModel, error) {
	sc := bufio.NewScanner(io.LimitReader(in, 64<<10))
	eof := false
	ask := func(q, def string) string {
		fmt.Fprintf(out, "%s [%s]: ", q, def)
		if eof || !sc.Scan() {
			eof = true
			return def
		}
		if a := strings.TrimSpace(sc.Text()); a != "" {
			return a
		}
		return def
	}
	for range 3 {
		var m initModel
		m.Provider = ask("Provider ("+initProviders+")", "ollama")
		if _, ok := defaultModels[m.Provider]; ok {
			m.Name = ask("Model", defaultModels[m.Provider])
			hint := "default"
			if m.Provider == "ollama" {
				hint = "$OLLAMA_HOST or http://127.0.0.1:11434"
			}
			if m.BaseURL = ask("Base URL", hint); m.BaseURL == hint {
				m.BaseURL = ""
			}
		}
		if eof {
			break
		}
		err := m.validate()
		if err == nil {
			return m, nil
		}
		msg := err.Error()
		for _, flag := range []string{"--provider ", "--model ", "--base-url "} {
			msg = strings.TrimPrefix(msg, flag)
		}
		fmt.Fprintf(out, "%s\n", msg)
	}
	fmt.Fprintln(out)
	return initModel{}, errors.New("no valid answer: run init again, or give --provider and --model")
}

// fileExists reports whether path names something.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
