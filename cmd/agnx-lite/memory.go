package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/memory"
)

const memoryUsage = "memory show AGENT [--days N] | search AGENT QUERY [--limit N] | edit AGENT [--daily DATE | --world TOPIC]"

// runMemory shows, searches and edits an agent's memory bank: the same
// plain Markdown files its memory tool reads and writes.
func runMemory(g *globals, args []string) error {
	fs := g.flags("memory")
	days := fs.Int("days", memory.DefaultDays, "show: how many days of daily logs (today included)")
	limit := fs.Int("limit", memory.DefaultLimit, "search: how many results")
	daily := fs.String("daily", "", "edit: the daily log of this date (YYYY-MM-DD, or today) instead of MEMORY.md")
	world := fs.String("world", "", "edit: the world memory file of this topic instead of MEMORY.md")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("say what to do and for which agent: show, search or edit, then the agent's name")
	}
	sub, name, rest := fs.Arg(0), fs.Arg(1), fs.Args()[2:]
	switch {
	case sub != "show" && sub != "search" && sub != "edit":
		return usagef("unknown subcommand %q", sub)
	case sub == "show" && (*days < 1 || *days > 3650):
		return usagef("--days must be between 1 and 3650")
	case sub == "search" && len(rest) == 0:
		return usagef("search needs a query: memory search %s WORDS", name)
	case sub == "search" && (*limit < 1 || *limit > 50):
		return usagef("--limit must be between 1 and 50")
	case sub == "edit" && len(rest) > 0:
		return usagef("edit takes no words after the agent; pick the file with --daily or --world")
	case sub == "edit" && *daily != "" && *world != "":
		return usagef("give --daily or --world, not both")
	case sub == "show" && len(rest) > 0:
		return usagef("show takes no words after the agent")
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	a, bank, err := memoryBank(cfg, name)
	if err != nil {
		return err
	}
	switch sub {
	case "show":
		return showMemory(g, a, bank, *days)
	case "search":
		return searchMemory(g, cfg, a, memory.Query{Text: strings.Join(rest, " "), Limit: *limit})
	}
	return editMemory(g, bank, *daily, *world)
}

// memoryBank loads the agent and returns its bank; an agent without
// memory is an error saying how to turn it on.
func memoryBank(cfg *config.Config, name string) (*agents.Agent, *memory.Bank, error) {
	if !agents.ValidName(name) {
		return nil, nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	dir := filepath.Join(cfg.AgentsDir, name)
	a, err := agents.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	if err != nil {
		return nil, nil, err
	}
	if !a.HasMemory() {
		return nil, nil, fmt.Errorf("agent %s has no memory: add \"memory: {backend: filesystem}\" under spec in %s",
			name, filepath.Join(dir, agents.FileName))
	}
	return a, memory.NewBank(memory.BankOptions{AgentDir: a.Dir, WorldDir: cfg.WorldMemoryDir(), World: cfg.WorldMemory.Limits()}), nil
}

func showMemory(g *globals, a *agents.Agent, bank *memory.Bank, days int) error {
	r, err := bank.Show(days)
	if err != nil {
		return err
	}
	if r.Text == "" {
		fmt.Fprintf(g.stdout, "agent %s has no memories yet (its files: %s; world memory: %s)\n", a.Name, bank.MemoryDir(), bank.WorldDir())
		return nil
	}
	fmt.Fprintln(g.stdout, r.Text)
	return nil
}

// searchMemory searches through the daemon when one serves this data
// dir (it holds the database), else in this process.
func searchMemory(g *globals, cfg *config.Config, a *agents.Agent, q memory.Query) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res memory.Results
	if url := findDaemon(cfg, ""); url != "" {
		r, err := newClient(cfg, url).SearchMemory(ctx, a.Name, q.Text, q.Limit)
		if err != nil {
			return fmt.Errorf("search the memory of %s through the daemon at %s: %w", a.Name, url, err)
		}
		res = memory.Results{Mode: r.Mode, Note: r.Note, Hits: make([]memory.Hit, len(r.Hits))}
		for i, h := range r.Hits {
			res.Hits[i] = memory.Hit(h)
		}
	} else {
		app, err := lite.Open(cfg, &lite.Options{Logger: g.logger()})
		if err != nil {
			return err
		}
		defer app.Close()
		if res, err = app.SearchMemory(ctx, a.Name, q); err != nil {
			return fmt.Errorf("search the memory of %s: %w", a.Name, err)
		}
	}
	fmt.Fprintln(g.stdout, memory.FormatHits(q.Text, res))
	return nil
}

// editMemory opens $VISUAL, $EDITOR or vi on MEMORY.md, a daily log or a
// world file, creating it first when it is missing.
func editMemory(g *globals, bank *memory.Bank, daily, world string) error {
	var (
		p   string
		err error
	)
	switch {
	case daily != "":
		day := bank.Now()
		if daily != "today" {
			day, err = time.ParseInLocation(memory.DateLayout, daily, time.Local)
			if err != nil {
				return usagef("--daily %q is not a date: use YYYY-MM-DD or today", daily)
			}
		}
		p, err = bank.EnsureDaily(day)
	case world != "":
		p, err = bank.EnsureWorld(world)
	default:
		p, err = bank.EnsureMemory()
	}
	if err != nil {
		return err
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	words := strings.Fields(editor)
	cmd := exec.Command(words[0], append(words[1:], p)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = g.stdin, g.stdout, g.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the editor %q did not finish well (%v): the file is %s", editor, err, p)
	}
	return nil
}
