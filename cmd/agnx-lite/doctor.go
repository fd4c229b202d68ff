package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agnx-lite/agnx-lite/lite"
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
	checks := lite.Doctor(context.Background(), cfg)
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
		if err := enc.Encode(map[string]any{"checks": checks, "failed": failed}); err != nil {
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
