package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
)

// stopTimeout bounds waiting for a daemon to stop: its drain (10 s) and
// close (5 s) bounds, and some.
const stopTimeout = 20 * time.Second

// runServeClient runs serve status | stop | reload-agents against the
// running daemon.
func runServeClient(g *globals, sub string, args []string) error {
	switch sub {
	case "status", "stop", "reload-agents":
	default:
		return usagef("unknown subcommand %q: status, stop or reload-agents", sub)
	}
	if len(args) > 0 {
		return usagef("serve %s takes no arguments", sub)
	}
	cfg, err := g.cfg()
	if err != nil {
		return err
	}
	url := findDaemon(cfg, "")
	if url == "" {
		return fmt.Errorf("no agnx-lite daemon is running for %s (start one with \"agnx-lite serve\")", cfg.DataDir)
	}
	c := newClient(cfg, url)
	switch sub {
	case "status":
		return serveStatus(g, c)
	case "stop":
		return serveStop(g, cfg, c)
	}
	return reloadAgents(g, c)
}

func serveStatus(g *globals, c *httpapi.Client) error {
	st, err := c.Status(context.Background())
	if err != nil {
		return err
	}
	url := st.Address
	if url == "" {
		url = c.URL()
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "pid\t%d\n", st.PID)
	fmt.Fprintf(w, "url\t%s\n", url)
	fmt.Fprintf(w, "version\t%s\n", st.Version)
	fmt.Fprintf(w, "uptime\t%s\n", time.Duration(st.UptimeSeconds)*time.Second)
	fmt.Fprintf(w, "sessions\t%d resident\n", st.SessionsResident)
	fmt.Fprintf(w, "turns\t%d running, %d waiting\n", st.TurnsRunning, st.TurnsWaiting)
	if st.SchedulesActive > 0 {
		fmt.Fprintf(w, "schedules\t%d active, next %s\n", st.SchedulesActive, st.SchedulesNext.Local().Format("2006-01-02 15:04:05 MST"))
	}
	for _, name := range slices.Sorted(maps.Keys(st.Gateways)) {
		fmt.Fprintf(w, "gateway %s\t%s\n", name, st.Gateways[name])
	}
	if st.RSSBytes > 0 {
		fmt.Fprintf(w, "memory\t%s (agnx-lite itself; MCP servers apart)\n", mib(st.RSSBytes))
	}
	var servers int64
	for _, m := range st.MCPServers {
		line := m.State
		if m.State == "running" {
			line += fmt.Sprintf(", pid %d, %s", m.PID, mib(m.RSSBytes))
			servers += m.RSSBytes
		}
		line += fmt.Sprintf(", %d tools, %d calls, %d failed, %d restarts", m.Tools, m.Calls, m.Failures, m.Restarts)
		if m.LastError != "" {
			line += "; last error: " + m.LastError
		}
		fmt.Fprintf(w, "mcp %s/%s\t%s\n", m.Agent, m.Server, line)
	}
	if servers > 0 {
		fmt.Fprintf(w, "mcp memory\t%s (all running MCP servers)\n", mib(servers))
	}
	return w.Flush()
}

// serveStop asks the daemon to stop, then waits until it no longer
// answers and its serve.json is gone (or names a dead process). It polls:
// the daemon is another process, with nothing to wait on.
func serveStop(g *globals, cfg *config.Config, c *httpapi.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !daemonGone(ctx, cfg, c) {
		select {
		case <-ctx.Done():
			pid := ""
			if d := config.ReadDaemon(cfg); d != nil {
				pid = fmt.Sprintf(" (pid %d)", d.PID)
			}
			return fmt.Errorf("the daemon at %s%s did not stop within %s: it may still be finishing turns", c.URL(), pid, stopTimeout)
		case <-tick.C:
		}
	}
	fmt.Fprintln(g.stdout, "stopped")
	return nil
}

func daemonGone(ctx context.Context, cfg *config.Config, c *httpapi.Client) bool {
	if d := config.ReadDaemon(cfg); d != nil && d.URL == c.URL() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return c.Live(ctx) != nil
}

// reloadAgents prints each agent ok, or its file:line error.
func reloadAgents(g *globals, c *httpapi.Client) error {
	list, err := c.ReloadAgents(context.Background())
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(g.stdout, "there are no agents in the agents folder: agnx-lite agent create NAME makes one")
		return nil
	}
	bad := 0
	for _, a := range list {
		if a.Err != "" {
			bad++
			fmt.Fprintf(g.stdout, "FAIL  %s\n", a.Err)
			continue
		}
		fmt.Fprintf(g.stdout, "ok    %s\n", a.Name)
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d agents are invalid; those already running keep their last good version", bad, len(list))
	}
	return nil
}

// mib writes a byte count in MiB, one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
