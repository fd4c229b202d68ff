package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
)

func runInit(g *globals, args []string) error {
	fs := g.flags("init")
	var m initModel
	fs.StringVar(&m.Provider, "provider", "", "the default agent's provider: "+initProviders)
	fs.StringVar(&m.Name, "model", "", "the default agent's model (e.g. qwen3:1.7b, gpt-4o-mini)")
	fs.StringVar(&m.BaseURL, "base-url", "", "the provider's URL (e.g. http://192.168.1.10:11434 for Ollama on another machine)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("takes at most one directory")
	}
	if fs.NArg() == 1 {
		g.dataDir = fs.Arg(0)
	}
	flagged := m != initModel{}
	if flagged {
		if err := m.validate(); err != nil {
			return usagef("%s", err)
		}
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	agentFile := filepath.Join(cfg.AgentsDir, cfg.Runtime.DefaultAgent, agents.FileName)
	fresh := !fileExists(agentFile)
	if flagged && !fresh {
		return fmt.Errorf("%s exists already: edit its spec.model, or init another data dir", agentFile)
	}
	if !flagged && fresh && g.stdinIsTerminal() {
		if m, err = promptModel(g.stdin, g.stdout); err != nil {
			return err
		}
	}
	wrote, err := config.Init(cfg)
	if err != nil {
		return err
	}
	if fresh && m != (initModel{}) {
		if err := m.apply(agentFile); err != nil {
			return err
		}
	}
	for _, w := range wrote {
		fmt.Fprintf(g.stdout, "wrote %s\n", w)
	}
	if len(wrote) == 0 {
		fmt.Fprintf(g.stdout, "%s is already set up\n", cfg.DataDir)
	}
	if fresh && g.stdinIsTerminal() {
		checkModel(g, cfg)
	}
	fmt.Fprintf(g.stdout, "next: %s chat -d %s\n", g.progName(), cfg.DataDir)
	return nil
}

// checkModel probes the new agent's provider as doctor does and says what
// is missing, so the first message does not find it out.
func checkModel(g *globals, cfg *config.Config) {
	if c := doctor.ProbeAgent(context.Background(), cfg, ""); c != nil {
		fmt.Fprintf(g.stdout, "check: %s\n  fix: %s\n", c.Detail, c.Fix)
		offerPull(g, c.Pull)
		return
	}
	fmt.Fprintf(g.stdout, "check: the default agent's model answers (or is hosted: agnx-lite doctor tells more)\n")
}

// offerPull asks whether to pull the models an Ollama lacks, and pulls
// them with their progress; anything but an empty answer or y declines.
func offerPull(g *globals, pull *doctor.ModelPull) {
	if pull == nil || len(pull.Models) == 0 {
		return
	}
	fmt.Fprintf(g.stdout, "pull %s now through Ollama at %s? [Y/n] ", strings.Join(pull.Models, ", "), pull.Base)
	answer, ok := readAnswer(g.stdin)
	if !ok {
		fmt.Fprintln(g.stdout)
		return // end of input: no
	}
	if a := strings.ToLower(answer); a != "" && a != "y" && a != "yes" {
		fmt.Fprintf(g.stdout, "not pulled: %s model pull %s does it later\n", g.progName(), pull.Models[0])
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := pullModels(ctx, g, pull.Base, pull.Models); err != nil {
		fmt.Fprintf(g.stderr, "agnx-lite: %s\n", err)
	}
}

// ensureInit sets up the data dir on first start, so that `chat` and `run`
// work with nothing prepared.
func ensureInit(g *globals, cfg *config.Config) error {
	list, err := agents.List(cfg.AgentsDir)
	if err != nil || len(list) > 0 {
		return err
	}
	wrote, err := config.Init(cfg)
	if err != nil {
		return err
	}
	for _, w := range wrote {
		fmt.Fprintf(g.stderr, "first start: wrote %s\n", w)
	}
	return nil
}

// readAnswer reads one line of at most 256 bytes, a byte at a time so
// nothing after it is taken from the input; ok is false at its end.
func readAnswer(r io.Reader) (string, bool) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 256 {
		n, err := r.Read(b)
		if n == 1 && b[0] == '\n' {
			return strings.TrimSpace(string(line)), true
		}
		if n == 1 {
			line = append(line, b[0])
		}
		if err != nil {
			return strings.TrimSpace(string(line)), len(line) > 0
		}
	}
	return strings.TrimSpace(string(line)), true
}
