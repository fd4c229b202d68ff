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
	approve := fs.Bool("approve", false, "allow, for this run only, the tool calls the agent's policy asks about (without it, run asks on a terminal and denies them otherwise)")
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
	switch {
	case *approve:
		p.ask, p.noPrompt = autoAnswer(b, s.ID, runtime.AllowOnce, "", errw), true
	case !fromStdin && g.stdinIsTerminal():
		p.ask = approver(b, s.ID, readLines(g.stdin), done, errw)
	default:
		// Nobody can answer: waiting would only hold the turn until the
		// approval timeout.
		p.ask, p.noPrompt = autoAnswer(b, s.ID, runtime.DenyCall, deniedNotice, errw), true
	}
	out, err := b.turn(context.Background(), s.ID, *msg, p, interrupt)
	if err != nil {
		return err
	}
	if *sessionID == "" && out.reason == runtime.TurnFailed && !out.answered {
		// Nothing from a model: no session of one unanswered message.
		if _, err := b.discard(context.Background(), s.ID); err != nil {
			g.logger().Debug("cannot remove an unanswered session", "session", s.ID, "err", err)
		}
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

// deniedNotice is what run says when it denies a call because nobody can
// be asked.
const deniedNotice = "denied: run cannot ask for approval without a terminal on standard input; " +
	"to allow such calls run it with --approve (this run only) or allow them in the agent's policy.yaml"

// autoAnswer answers each approval of a turn with decision at once, after
// printing note when it is set. Both backends take the same path: the
// answer goes through the backend's approve, as a user's would.
func autoAnswer(b backend, sid, decision, note string, errw func(string)) func(runtime.Event) {
	return func(e runtime.Event) {
		if note != "" {
			errw(note)
		}
		if err := b.approve(context.Background(), sid, e.CallID, decision); err != nil {
			errw("error: " + err.Error())
		}
	}
}
