package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/doctor"
	"github.com/agnx-lite/agnx-lite/lite/systemd"
)

func runServe(g *globals, args []string) error {
	fs := g.flags("serve")
	host := fs.String("host", "", "address to bind (default server.host, 127.0.0.1)")
	port := fs.IntP("port", "p", 0, "port to listen on (default server.port, 8080)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return runServeClient(g, fs.Arg(0), fs.Args()[1:])
	}
	cfg, err := g.cfg()
	if err != nil {
		return &exitError{code: systemd.ExitConfig, err: err}
	}
	if *host != "" {
		cfg.Server.Host = *host
	}
	if *port != 0 {
		cfg.Server.Port = *port
	}
	if err := ensureInit(g, cfg); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logger := g.daemonLogger()
	// The probe writes to g.stderr, so it ends before we return: deferred
	// calls run last first, so it is cancelled, then waited for.
	var probe sync.WaitGroup
	defer probe.Wait()
	probeCtx, cancelProbe := context.WithCancel(ctx)
	defer cancelProbe()
	err = lite.Serve(ctx, cfg, &lite.ServeOptions{
		Options: lite.Options{Logger: logger},
		Version: version,
		Ready: func(url string) {
			if isTerminal(os.Stderr) {
				bin := g.progName()
				fmt.Fprintf(g.stderr, "\nagnx-lite is serving at %s (data in %s)\n"+
					"  open the web page:  %s/\n"+
					"  chat with it:       %s chat -d %s\n"+
					"  or over HTTP:       curl %s/api/v1/agents\n"+
					"  stop it:            Ctrl-C, or %s serve stop -d %s\n\n",
					url, cfg.DataDir, url, bin, cfg.DataDir, url, bin, cfg.DataDir)
			}
			// Off the start-up path: ready does not wait for the model server.
			probe.Go(func() { warnProvider(probeCtx, g, cfg, logger) })
		},
	})
	var ae *agents.Error
	if errors.Is(err, lite.ErrBadConfig) || errors.As(err, &ae) {
		// systemd's RestartPreventExitStatus: restarting cannot fix this.
		return &exitError{code: systemd.ExitConfig, err: err}
	}
	return err
}

// daemonLogger logs JSON lines to stderr at info (the journal keeps them).
func (g *globals) daemonLogger() *slog.Logger {
	level := slog.LevelInfo
	switch {
	case g.quiet:
		level = slog.LevelWarn
	case g.verbose > 0:
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// warnProvider says in one line, at start, when the default agent's model
// server does not answer or lacks its model, and how to fix it, rather
// than let the first message fail. On a terminal it is a plain line; the
// journal gets a log record.
func warnProvider(ctx context.Context, g *globals, cfg *config.Config, logger *slog.Logger) {
	c := doctor.ProbeAgent(ctx, cfg, "")
	if c == nil || ctx.Err() != nil {
		return
	}
	if g.quiet {
		return
	}
	if isTerminal(os.Stderr) || g.plainWarnings {
		fmt.Fprintf(g.stderr, "warning: %s; fix: %s\n", c.Detail, c.Fix)
		return
	}
	logger.Warn("the default agent's model is not available", "detail", c.Detail, "fix", c.Fix)
}
