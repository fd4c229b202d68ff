package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func runRun(g *globals, args []string) error {
	fs := g.flags("run")
	agent := fs.StringP("agent", "a", "", "agent to talk to (default: runtime.default_agent)")
	msg := fs.StringP("message", "m", "", `the message; "-" reads it from standard input`)
	sessionID := fs.String("session", "", "continue this session instead of starting a new one")
	server := fs.StringP("server", "s", "", "talk to the daemon at this URL (default: the running one, if any)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *msg == "" && fs.NArg() > 0 {
		*msg = strings.Join(fs.Args(), " ")
	}
	fromStdin := *msg == "-"
	if fromStdin {
		data, err := io.ReadAll(io.LimitReader(g.stdin, 1<<20))
		if err != nil {
			return fmt.Errorf("read the message from standard input: %w", err)
		}
		*msg = string(data)
	}
	if strings.TrimSpace(*msg) == "" {
		return usagef("give the message with -m")
	}
	b, cfg, err := openBackend(g, *server)
	if err != nil {
		return err
	}
	defer b.close()
	s, err := startSession(b, cfg, *agent, *sessionID)
	if err != nil {
		return err
	}
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	p := &turnPrinter{out: g.stdout, errw: g.stderr, keepErrors: true}
	done := make(chan struct{})
	defer close(done)
	errw := func(s string) { fmt.Fprintln(g.stderr, s) }
	if !fromStdin && g.stdinIsTerminal() {
		p.ask = approver(b, s.ID, readLines(g.stdin), done, errw)
	} else {
		p.ask = func(e runtime.Event) {
			errw("(answer it with: agnx-lite attach " + s.ID + ", or it is denied when runtime.approval_timeout_seconds pass)")
		}
	}
	out, err := b.turn(context.Background(), s.ID, *msg, p, interrupt)
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
