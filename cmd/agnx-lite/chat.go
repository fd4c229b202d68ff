package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func runChat(g *globals, args []string) error {
	fs := g.flags("chat")
	agent := fs.StringP("agent", "a", "", "agent to talk to (default: runtime.default_agent)")
	sessionID := fs.String("session", "", "continue this session")
	cont := fs.BoolP("continue", "C", false, "continue the most recent CLI session with the agent")
	server := fs.StringP("server", "s", "", "talk to the daemon at this URL (default: the running one, if any)")
	if err := parse(fs, args); err != nil {
		return err
	}
	b, cfg, err := openBackend(g, *server)
	if err != nil {
		return err
	}
	defer b.close()
	if *agent == "" {
		*agent = cfg.Runtime.DefaultAgent
	}
	if *cont && *sessionID == "" {
		*sessionID = latestSession(b, *agent)
	}
	s, err := startSession(b, cfg, *agent, *sessionID)
	if err != nil {
		return err
	}
	c := &chat{g: g, b: b, cfg: cfg, s: s, own: *sessionID == "", tty: g.stdinIsTerminal()}
	c.p = &turnPrinter{out: g.stdout, errw: g.stderr, color: c.tty && isTerminal(os.Stdout)}
	return c.repl()
}

type chat struct {
	g   *globals
	b   backend
	cfg *config.Config
	s   runtime.SessionInfo
	p   *turnPrinter
	tty bool
	// own is set while s is a session this chat started; turns counts
	// the messages it sent to it. An own session nothing from a model
	// reached is removed (leave, afterTurn); s.ID is then "" until the
	// next message starts another.
	own   bool
	turns int
}

func (c *chat) repl() error {
	defer c.leave()
	c.banner()
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	lines := readLines(c.g.stdin)
	for {
		c.prompt()
		var line string
		select {
		case <-interrupt:
			fmt.Fprintln(c.g.stdout, c.p.dim("\n(nothing to stop: /quit or Ctrl-D leaves)"))
			continue
		case l, ok := <-lines:
			if !ok {
				if c.tty {
					fmt.Fprintln(c.g.stdout)
				}
				return nil
			}
			line = strings.TrimSpace(l)
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "/") {
			if quit := c.command(line); quit {
				return nil
			}
			continue
		}
		if err := c.ensureSession(); err != nil {
			return err
		}
		done := make(chan struct{})
		c.p.ask = approver(c.b, c.s.ID, lines, done, func(s string) { fmt.Fprintln(c.g.stderr, c.p.red(s)) })
		c.turns++
		out, err := c.b.turn(context.Background(), c.s.ID, line, c.p, interrupt)
		close(done)
		if err != nil {
			return err
		}
		c.afterTurn(out)
	}
}

// ensureSession starts a new session when the last one was removed.
func (c *chat) ensureSession() error {
	if c.s.ID != "" {
		return nil
	}
	s, err := startSession(c.b, c.cfg, c.s.Agent, "")
	if err != nil {
		return err
	}
	c.s, c.own, c.turns = s, true, 0
	fmt.Fprintln(c.g.stdout, c.p.dim("new session "+s.ID))
	return nil
}

// afterTurn removes the chat's own session when its first turn failed
// before a model said anything (Ollama down, a missing model or key): the
// user saw why, and keeping a session of one unanswered message would
// only clutter the list. The next message starts a new one.
func (c *chat) afterTurn(out outcome) {
	if !c.own || c.turns != 1 || out.reason != runtime.TurnFailed || out.answered {
		return
	}
	if c.discard() {
		fmt.Fprintln(c.g.stdout, c.p.dim("(nothing was kept: fix that, then send your message again)"))
	}
}

// leave removes the chat's own session when nothing was sent to it.
func (c *chat) leave() {
	if c.own && c.turns == 0 {
		c.discard()
	}
}

func (c *chat) discard() bool {
	if c.s.ID == "" {
		return false
	}
	gone, err := c.b.discard(context.Background(), c.s.ID)
	if err != nil {
		c.g.logger().Debug("cannot remove an unanswered session", "session", c.s.ID, "err", err)
		return false
	}
	if gone {
		c.s.ID = ""
	}
	return gone
}

// command runs a /command; it reports whether to leave.
func (c *chat) command(line string) (quit bool) {
	switch strings.Fields(line)[0] {
	case "/quit", "/exit":
		return true
	case "/reset", "/new":
		c.leave()
		old := c.s.ID
		c.s.ID = ""
		if err := c.ensureSession(); err != nil {
			c.s.ID = old
			fmt.Fprintln(c.g.stderr, c.p.red("error: "+err.Error()))
			return false
		}
		if old != "" {
			fmt.Fprintln(c.g.stdout, c.p.dim("(the old one is kept: agnx-lite session list)"))
		}
	case "/status":
		c.status()
	case "/compact":
		if c.s.ID == "" {
			fmt.Fprintln(c.g.stdout, c.p.dim("nothing to compact yet"))
			return false
		}
		res, err := c.b.compact(context.Background(), c.s.ID)
		if say, ok := runtime.SayCompact(res, err); ok {
			fmt.Fprintln(c.g.stdout, c.p.dim(say))
			return false
		}
		fmt.Fprintln(c.g.stderr, c.p.red("error: "+err.Error()))
	case "/help":
		fmt.Fprintln(c.g.stdout, "/reset starts a new session · /status shows this one · /compact summarises its older messages · /quit leaves · Ctrl-C stops a reply · Ctrl-D leaves")
	default:
		fmt.Fprintln(c.g.stdout, c.p.dim("unknown command "+line+": try /help"))
	}
	return false
}

func (c *chat) status() {
	ctx := context.Background()
	if c.s.ID == "" {
		fmt.Fprintln(c.g.stdout, "no session yet: your next message starts one with agent "+c.s.Agent)
		return
	}
	info, err := c.b.session(ctx, c.s.ID)
	if err != nil {
		fmt.Fprintln(c.g.stderr, c.p.red("error: "+err.Error()))
		return
	}
	fmt.Fprintf(c.g.stdout, "session %s · agent %s · %s · %d turns · %d events · tokens in %d, out %d\n",
		info.ID, info.Agent, info.Status, info.Turns, info.LastSeq, info.Usage.PromptTokens, info.Usage.CompletionTokens)
	if m, err := c.b.model(ctx, info.Agent); err == nil {
		fmt.Fprintf(c.g.stdout, "model %s via %s%s\n", m.name, m.provider, baseURLNote(m.baseURL))
	}
}

func (c *chat) banner() {
	model := ""
	if m, err := c.b.model(context.Background(), c.s.Agent); err == nil {
		model = " (" + m.String() + ")"
	}
	fmt.Fprintf(c.g.stdout, "agnx-lite chat · agent %s%s · session %s\n", c.s.Agent, model, c.s.ID)
	if c.tty {
		via := ""
		if h, ok := c.b.(*httpBackend); ok {
			via = " · via the daemon at " + h.url
		}
		fmt.Fprintln(c.g.stdout, c.p.dim("type a message · /help · Ctrl-C stops a reply · Ctrl-D leaves"+via))
	}
}

func (c *chat) prompt() {
	if c.tty {
		fmt.Fprint(c.g.stdout, "\nyou> ")
	}
}

func baseURLNote(u string) string {
	if u == "" {
		return ""
	}
	return " at " + u
}

// readLines feeds input to a channel, so the REPL can wait for a line and
// a signal at once. The channel closes at end of input.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}
