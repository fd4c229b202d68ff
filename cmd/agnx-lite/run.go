package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func runRun(g *globals, args []string) error {
	fs := g.flags("run")
	agent := fs.StringP("agent", "a", "", "agent to talk to (default: runtime.default_agent)")
	msg := fs.StringP("message", "m", "", `the message; "-" reads it from standard input`)
	sessionID := fs.String("session", "", "continue this session instead of starting a new one")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *msg == "" && fs.NArg() > 0 {
		*msg = strings.Join(fs.Args(), " ")
	}
	if *msg == "-" {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		if err != nil {
			return fmt.Errorf("read the message from standard input: %w", err)
		}
		*msg = string(data)
	}
	if strings.TrimSpace(*msg) == "" {
		return usagef("give the message with -m")
	}
	app, err := openApp(g)
	if err != nil {
		return err
	}
	defer app.Close()
	s, err := startSession(app, *agent, *sessionID)
	if err != nil {
		return err
	}
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	p := &turnPrinter{out: g.stdout, errw: g.stderr, keepErrors: true}
	out, err := sendAndFollow(app, s.ID, *msg, p, interrupt)
	if err != nil {
		return err
	}
	switch out.reason {
	case runtime.TurnCompleted:
		return nil
	case runtime.TurnCancelled:
		return errors.New("cancelled")
	}
	if out.err != "" {
		return errors.New(out.err)
	}
	return fmt.Errorf("the turn %s", out.reason)
}

// openApp locates the config, sets up a fresh data dir and opens it.
func openApp(g *globals) (*lite.App, error) {
	cfg, err := g.cfg()
	if err != nil {
		return nil, err
	}
	if err := ensureInit(g, cfg); err != nil {
		return nil, err
	}
	return lite.Open(cfg, &lite.Options{Logger: g.logger()})
}

// startSession continues sessionID, or starts a new CLI session.
func startSession(app *lite.App, agent, sessionID string) (runtime.SessionInfo, error) {
	ctx := context.Background()
	if sessionID != "" {
		info, err := app.Loop.Session(ctx, sessionID)
		if errors.Is(err, runtime.ErrSessionNotFound) {
			return info, fmt.Errorf("no session %s: list them with \"agnx-lite session list\"", sessionID)
		}
		return info, err
	}
	if agent == "" {
		agent = app.Config.Runtime.DefaultAgent
	}
	return app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: "cli"})
}

// sendAndFollow sends one message and prints the turn it starts. The
// subscription is made first, so no event of the turn is missed.
func sendAndFollow(app *lite.App, sid, msg string, p *turnPrinter, interrupt <-chan os.Signal) (outcome, error) {
	ctx := context.Background()
	sub, err := app.Loop.Subscribe(ctx, sid)
	if err != nil {
		return outcome{}, err
	}
	defer sub.Close()
	if _, err := app.Loop.Send(ctx, sid, runtime.Input{Content: msg, SenderID: cliUser()}); err != nil {
		return outcome{}, err
	}
	return p.follow(ctx, sub, interrupt, func() { _, _ = app.Loop.Cancel(ctx, sid) })
}

func cliUser() string {
	if u := os.Getenv("USER"); u != "" {
		return "cli:" + u
	}
	return "cli"
}
