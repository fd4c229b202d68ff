package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

const usageUsage = "usage [--by agent|model|day] [--since 7d|24h|2026-11-01] [--agent A] [--json]"

// usageTimeout bounds the usage command.
const usageTimeout = 30 * time.Second

// runUsage prints the tokens models used, and their estimated cost.
func runUsage(g *globals, args []string) error {
	fs := g.flags("usage")
	by := fs.String("by", "", "one row per agent, model or day (default: the total alone)")
	since := fs.String("since", "", "from when: 7d, 24h, today, a date (2026-11-01) or an RFC 3339 time (default: everything kept)")
	agent := fs.String("agent", "", "only this agent's usage")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("usage takes no words; pick with --by, --since and --agent")
	case *by != runtime.UsageTotal && *by != runtime.UsageByAgent && *by != runtime.UsageByModel && *by != runtime.UsageByDay:
		return usagef("--by %q: use agent, model or day", *by)
	case *agent != "" && !agents.ValidName(*agent):
		return usagef("--agent %q is not an agent name", *agent)
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	from, err := runtime.ParseSince(*since, time.Now(), cfg.Scheduler.Location())
	if err != nil {
		return usagef("--%s", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), usageTimeout)
	defer cancel()
	rep, err := readUsage(ctx, cfg, runtime.UsageQuery{Since: from, By: *by, Agent: *agent}, *since)
	if err != nil {
		return fmt.Errorf("read the usage: %w", err)
	}
	if *asJSON {
		return printJSON(g.stdout, rep)
	}
	return printUsageReport(g.stdout, rep)
}

// readUsage asks the daemon serving this data dir (it holds the
// database), else reads the database here, read-only.
func readUsage(ctx context.Context, cfg *config.Config, q runtime.UsageQuery, since string) (runtime.UsageReport, error) {
	if url := findDaemon(cfg, ""); url != "" {
		return newClient(cfg, url).Usage(ctx, q.By, since, q.Agent)
	}
	if _, err := os.Stat(cfg.DBPath()); errors.Is(err, os.ErrNotExist) {
		return runtime.UsageReport{Since: q.Since, By: q.By, Agent: q.Agent, Rows: []runtime.UsageRow{},
			Total: runtime.UsageRow{Key: "total"}}, nil
	}
	st, err := storage.Open(cfg.DBPath(), &storage.Options{ReadOnly: true})
	if err != nil {
		return runtime.UsageReport{}, err
	}
	defer st.Close()
	q.Location, q.Prices = cfg.Scheduler.Location(), cfg.RuntimePrices()
	return runtime.ReadUsage(st, q)
}

// printUsageReport prints the report as a table with a total line. Cache and
// reasoning columns appear when some call had them, the cost column when
// some model has a price ("—": unpriced; "+": some calls unpriced).
func printUsageReport(out io.Writer, rep runtime.UsageReport) error {
	if rep.Total.Calls == 0 {
		msg := "no model calls recorded"
		if !rep.Since.IsZero() {
			msg += " since " + rep.Since.Local().Format("2006-01-02 15:04")
		}
		if rep.Agent != "" {
			msg += " for " + rep.Agent
		}
		_, err := fmt.Fprintln(out, msg)
		return err
	}
	cols := usageColumns(rep)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{strings.ToUpper(rep.By)}
	for _, c := range cols {
		head = append(head, c.name)
	}
	fmt.Fprintln(w, strings.Join(head, "\t")+"\t")
	for _, row := range append(rep.Rows, rep.Total) {
		cells := []string{row.Key}
		for _, c := range cols {
			cells = append(cells, c.cell(row))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
	}
	return w.Flush()
}

type usageColumn struct {
	name string
	cell func(runtime.UsageRow) string
}

func usageColumns(rep runtime.UsageReport) []usageColumn {
	num := func(f func(runtime.UsageRow) int64) func(runtime.UsageRow) string {
		return func(r runtime.UsageRow) string { return strconv.FormatInt(f(r), 10) }
	}
	cols := []usageColumn{
		{"CALLS", num(func(r runtime.UsageRow) int64 { return r.Calls })},
		{"INPUT", num(func(r runtime.UsageRow) int64 { return r.Input })},
		{"OUTPUT", num(func(r runtime.UsageRow) int64 { return r.Output })},
	}
	t := rep.Total
	if t.CacheRead > 0 || t.CacheWrite > 0 {
		cols = append(cols, usageColumn{"CACHE READ", num(func(r runtime.UsageRow) int64 { return r.CacheRead })},
			usageColumn{"CACHE WRITE", num(func(r runtime.UsageRow) int64 { return r.CacheWrite })})
	}
	if t.Reasoning > 0 {
		cols = append(cols, usageColumn{"REASONING", num(func(r runtime.UsageRow) int64 { return r.Reasoning })})
	}
	cols = append(cols, usageColumn{"TOTAL", num(func(r runtime.UsageRow) int64 { return r.Total })})
	if rep.Priced {
		cols = append(cols, usageColumn{"COST USD", costCell})
	}
	return cols
}

func costCell(r runtime.UsageRow) string {
	if r.CostUSD == nil {
		return "—"
	}
	s := strconv.FormatFloat(*r.CostUSD, 'f', 2, 64)
	if *r.CostUSD < 1 {
		s = strconv.FormatFloat(*r.CostUSD, 'f', 4, 64)
	}
	if r.CostPartial {
		s += "+"
	}
	return s
}
