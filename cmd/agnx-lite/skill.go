package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/agentcache"
	"github.com/agnx-lite/agnx-lite/lite/config"
)

// runSkill lists agents' skills or checks SKILL.md files, from the files
// alone: no daemon, no model server.
func runSkill(g *globals, args []string) error {
	flags := g.flags("skill")
	if err := parse(flags, args); err != nil {
		return err
	}
	if flags.NArg() == 0 {
		return usagef("say what to do: list or validate")
	}
	sub, rest := flags.Arg(0), flags.Args()[1:]
	if len(rest) > 1 {
		return usagef("%s takes at most one agent or folder", sub)
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		return listSkills(g, cfg, rest)
	case "validate":
		return validateSkills(g, cfg, rest)
	}
	return usagef("unknown subcommand %q", sub)
}

// sharedSkillsDir is the data dir's skills folder.
func sharedSkillsDir(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, agents.SkillsFolder)
}

// loadSkilled loads an agent (without its tools) with the shared skills
// it gets, as the daemon gives them.
func loadSkilled(cfg *config.Config, name string) (*agents.Agent, error) {
	if !agents.ValidName(name) {
		return nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	a, err := agents.Load(filepath.Join(cfg.AgentsDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &agentcache.AgentNotFoundError{Name: name, Dir: cfg.AgentsDir}
	}
	if err != nil {
		return nil, err
	}
	a.AddSharedSkills(sharedSkillsDir(cfg))
	return a, nil
}

// listSkills prints the skills of one agent (its own and the shared ones
// it gets), or of every agent and then the shared ones.
func listSkills(g *globals, cfg *config.Config, names []string) error {
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	if len(names) == 1 {
		a, err := loadSkilled(cfg, names[0])
		if err != nil {
			return err
		}
		if len(a.Skills) == 0 {
			fmt.Fprintf(g.stdout, "agent %s has no skills: add folders holding a SKILL.md to %s or %s\n",
				a.Name, a.SkillsDir, sharedSkillsDir(cfg))
			return nil
		}
		fmt.Fprintln(w, "NAME\tSOURCE\tDESCRIPTION")
		for _, s := range a.Skills {
			fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name, skillSource(s), describe(s.Description))
		}
		return w.Flush()
	}
	list, err := agents.List(cfg.AgentsDir)
	if err != nil {
		return err
	}
	shared, _, _ := agents.LoadSkills(sharedSkillsDir(cfg))
	fmt.Fprintln(w, "AGENT\tNAME\tSOURCE\tDESCRIPTION")
	rows := 0
	for _, e := range list {
		a, err := agents.Load(e.Dir)
		if err != nil {
			fmt.Fprintf(w, "%s\t-\t-\tinvalid agent: %s\n", e.Name, oneLine(err.Error()))
			continue
		}
		for _, s := range a.Skills {
			fmt.Fprintf(w, "%s\t%s\tagent\t%s\n", e.Name, s.Name, describe(s.Description))
			rows++
		}
	}
	for _, s := range shared {
		fmt.Fprintf(w, "(all)\t%s\tshared\t%s\n", s.Name, describe(s.Description))
		rows++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if rows == 0 {
		fmt.Fprintf(g.stdout, "no skills: add folders holding a SKILL.md to an agent's skills/ or to %s\n", sharedSkillsDir(cfg))
	}
	return nil
}

func skillSource(s agents.Skill) string {
	if s.Shared {
		return "shared"
	}
	return "agent"
}

// describe is a description on one line, cut for a table.
func describe(d string) string { return oneLine(strings.Join(strings.Fields(d), " ")) }

// validateSkills prints each problem of the skills named (an agent's, a
// folder's, every agent's and the shared ones) as "file:line: what is
// wrong", and fails if there is any.
func validateSkills(g *globals, cfg *config.Config, args []string) error {
	var valid int
	var problems []error
	add := func(skills int, errs ...error) {
		valid += skills
		problems = append(problems, errs...)
	}
	switch {
	case len(args) == 0:
		list, err := agents.List(cfg.AgentsDir)
		if err != nil {
			return err
		}
		for _, e := range list {
			a, err := agents.Load(e.Dir)
			if err != nil {
				add(0, err)
				continue
			}
			add(len(a.Skills), asErrors(a.SkillProblems)...)
		}
		skills, _, errs := agents.LoadSkills(sharedSkillsDir(cfg))
		add(len(skills), asErrors(errs)...)
	case isAgent(cfg, args[0]):
		a, err := loadSkilled(cfg, args[0])
		if err != nil {
			return err
		}
		add(len(a.Skills), asErrors(a.SkillProblems)...)
	default:
		n, errs, err := validatePath(args[0])
		if err != nil {
			return err
		}
		add(n, errs...)
	}
	for _, p := range problems {
		fmt.Fprintln(g.stdout, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d %s; %d %s valid: fix each file:line above (a skill with a problem is left out)",
			len(problems), plural(len(problems), "problem", "problems"), valid, plural(valid, "skill is", "skills are"))
	}
	fmt.Fprintf(g.stdout, "%d %s valid\n", valid, plural(valid, "skill", "skills"))
	return nil
}

// isAgent reports whether name is an agent of the agents folder.
func isAgent(cfg *config.Config, name string) bool {
	if !agents.ValidName(name) {
		return false
	}
	_, err := os.Stat(filepath.Join(cfg.AgentsDir, name, agents.FileName))
	return err == nil
}

// validatePath checks the skills at p: a SKILL.md, a skill's folder, or
// a folder of skills.
func validatePath(p string) (valid int, problems []error, err error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, nil, fmt.Errorf("%s is neither an agent nor a folder of skills: name an agent (agnx-lite agent list), "+
			"a skill's folder or a folder of skills", p)
	}
	dir := p
	if !st.IsDir() {
		if filepath.Base(p) != agents.SkillFile {
			return 0, nil, fmt.Errorf("%s is not a %s: name a skill's %s or its folder", p, agents.SkillFile, agents.SkillFile)
		}
		dir = filepath.Dir(p)
	}
	if _, err := os.Lstat(filepath.Join(dir, agents.SkillFile)); err == nil {
		if _, err := agents.LoadSkill(dir); err != nil {
			return 0, []error{err}, nil
		}
		return 1, nil, nil
	}
	skills, _, errs := agents.LoadSkills(dir)
	return len(skills), asErrors(errs), nil
}

func asErrors(es []*agents.Error) []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
