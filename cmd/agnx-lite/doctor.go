package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/doctor"
)

func runDoctor(g *globals, args []string) error {
	fs := g.flags("doctor")
	format := fs.String("format", "text", "text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := g.cfg()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	checks := doctor.Run(context.Background(), cfg)
	failed := 0
	for _, c := range checks {
		if c.Status == "fail" {
			failed++
		}
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doctorReport(checks)); err != nil {
			return err
		}
	case "text":
		for _, c := range checks {
			fmt.Fprintf(g.stdout, "%-4s  %-22s %s\n", c.Status, c.Name, c.Detail)
			if c.Fix != "" && c.Status != "ok" {
				fmt.Fprintf(g.stdout, "      %-22s fix: %s\n", "", c.Fix)
			}
		}
	default:
		return usagef("--format is text or json")
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

// The JSON report has Agnx's shape ({status, sections:[{name, checks:[{status,
// message}]}], summary}), so scripts written for "duragent doctor --format
// json" read it; each check also keeps its name and fix.
type (
	doctorJSON struct {
		Status   string          `json:"status"` // ok | warn | error
		Sections []doctorSection `json:"sections"`
		Summary  doctorSummary   `json:"summary"`
	}
	doctorSection struct {
		Name   string        `json:"name"`
		Checks []doctorCheck `json:"checks"`
	}
	doctorCheck struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		Name    string `json:"name"`
		Fix     string `json:"fix,omitempty"`
	}
	doctorSummary struct {
		OK    int `json:"ok"`
		Warn  int `json:"warn"`
		Error int `json:"error"`
	}
)

// sectionOf puts each check under the heading Agnx's doctor uses for
// its kind; checks Agnx has no heading for go under Host.
func sectionOf(name string) string {
	switch {
	case name == "config" || name == "data dir" || name == "database":
		return "Configuration"
	case name == "agents" || strings.HasPrefix(name, "agent ") || strings.HasPrefix(name, "provider ") || strings.HasPrefix(name, "model ") ||
		strings.HasPrefix(name, "mcp "):
		return "Agents"
	case name == "telegram" || strings.HasPrefix(name, "gateway") || strings.HasPrefix(name, "plugin"):
		return "Gateways"
	case name == "sandbox" || name == "wasm" || name == "security":
		return "Security"
	}
	return "Host"
}

func doctorReport(checks []doctor.Check) doctorJSON {
	r := doctorJSON{Sections: []doctorSection{}}
	at := map[string]int{}
	for _, c := range checks {
		st := c.Status
		switch st {
		case "fail":
			st = "error"
			r.Summary.Error++
		case "warn":
			r.Summary.Warn++
		default:
			r.Summary.OK++
		}
		sec := sectionOf(c.Name)
		i, ok := at[sec]
		if !ok {
			i = len(r.Sections)
			at[sec] = i
			r.Sections = append(r.Sections, doctorSection{Name: sec})
		}
		r.Sections[i].Checks = append(r.Sections[i].Checks, doctorCheck{Status: st, Message: c.Detail, Name: c.Name, Fix: c.Fix})
	}
	switch {
	case r.Summary.Error > 0:
		r.Status = "error"
	case r.Summary.Warn > 0:
		r.Status = "warn"
	default:
		r.Status = "ok"
	}
	return r
}
