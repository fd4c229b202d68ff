package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func runChat(g *globals, args []string) error {
	fs := g.flags("chat")
	agent := fs.StringP("agent", "a", "", "agent to talk to (default: runtime.default_agent)")
	sessionID := fs.String("session", "", "continue this session")
	cont := fs.BoolP("continue", "C", false, "continue the most recent CLI session with the agent")
	if err := parse(fs, args); err != nil {
		return err
	}
	app, err := openApp(g)
	if err != nil {
		return err
	}
	defer app.Close()
	if *agent == "" {
		*agent = app.Config.Runtime.DefaultAgent
	}
	if *cont && *sessionID == "" {
		*sessionID = latestSession(app, *agent)
	}
	s, err := startSession(app, *agent, *sessionID)
	if err != nil {
		return err
	}
	c := &chat{g: g, app: app, s: s, tty: isTerminal(os.Stdin)}
	c.p = &turnPrinter{out: g.stdout, errw: g.stderr, color: c.tty && isTerminal(os.Stdout)}
	return c.repl()
}

type chat struct {
	g   *globals
	app *lite.App
	s   runtime.SessionInfo
	p   *turnPrinter
	tty bool
}

func (c *chat) repl() error {
	c.banner()
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	lines := readLines(os.Stdin)
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
		if _, err := sendAndFollow(c.app, c.s.ID, line, c.p, interrupt); err != nil {
			return err
		}
	}
}

// command runs a /command; it reports whether to leave.
func (c *chat) command(line string) (quit bool) {
	switch strings.Fields(line)[0] {
	case "/quit", "/exit":
		return true
	case "/reset", "/new":
		s, err := startSession(c.app, c.s.Agent, "")
		if err != nil {
			fmt.Fprintln(c.g.stderr, c.p.red("error: "+err.Error()))
			return false
		}
		c.s = s
		fmt.Fprintln(c.g.stdout, c.p.dim("new session "+s.ID+" (the old one is kept: agnx-lite session list)"))
	case "/status":
		c.status()
	case "/help":
		fmt.Fprintln(c.g.stdout, "/reset starts a new session · /status shows this one · /quit leaves · Ctrl-C stops a reply · Ctrl-D leaves")
	default:
		fmt.Fprintln(c.g.stdout, c.p.dim("unknown command "+line+": try /help"))
	}
	return false
}

func (c *chat) status() {
	info, err := c.app.Loop.Session(context.Background(), c.s.ID)
	if err != nil {
		fmt.Fprintln(c.g.stderr, c.p.red("error: "+err.Error()))
		return
	}
	fmt.Fprintf(c.g.stdout, "session %s · agent %s · %s · %d turns · %d events · tokens in %d, out %d\n",
		info.ID, info.Agent, info.Status, info.Turns, info.LastSeq, info.Usage.PromptTokens, info.Usage.CompletionTokens)
	if la, err := c.app.Agents.LoadAgent(info.Agent); err == nil {
		m := la.Spec.Model
		fmt.Fprintf(c.g.stdout, "model %s via %s%s\n", m.Name, m.Provider, baseURLNote(m.BaseURL))
	}
}

func (c *chat) banner() {
	model := ""
	if la, err := c.app.Agents.LoadAgent(c.s.Agent); err == nil {
		model = fmt.Sprintf(" (%s %s%s)", la.Spec.Model.Provider, la.Spec.Model.Name, baseURLNote(la.Spec.Model.BaseURL))
	}
	fmt.Fprintf(c.g.stdout, "agnx-lite chat · agent %s%s · session %s\n", c.s.Agent, model, c.s.ID)
	if c.tty {
		fmt.Fprintln(c.g.stdout, c.p.dim("type a message · /help · Ctrl-C stops a reply · Ctrl-D leaves"))
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

// readLines feeds standard input to a channel, so the REPL can wait for a
// line and a signal at once. The channel closes at end of input.
func readLines(f *os.File) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// latestSession is the newest CLI session with the agent, or "".
func latestSession(app *lite.App, agent string) string {
	list, err := runtime.ListSessions(app.Store)
	if err != nil {
		return ""
	}
	for _, s := range list {
		if s.Agent == agent && s.Gateway == "cli" {
			return s.ID
		}
	}
	return ""
}
