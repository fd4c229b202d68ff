package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func runAttach(g *globals, args []string) error {
	fs := g.flags("attach")
	list := fs.Bool("list", false, "list the sessions instead")
	server := fs.StringP("server", "s", "", "follow a session of the daemon at this URL (default: the running one, if any)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("takes at most one session id")
	}
	if *list {
		return attachList(g, *server)
	}
	b, _, err := openBackend(g, *server)
	if err != nil {
		return err
	}
	defer b.close()
	ctx := context.Background()
	id := fs.Arg(0)
	if id == "" {
		all, err := b.sessions(ctx)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			return fmt.Errorf("no sessions yet: start one with \"agnx-lite chat\"")
		}
		id = all[0].ID // the most recently updated
	}
	info, err := b.session(ctx, id)
	if isSessionNotFound(err) {
		return fmt.Errorf("no session %s: list them with \"agnx-lite attach --list\"", id)
	}
	if err != nil {
		return err
	}
	v := &attachView{g: g, b: b, s: info, you: cliUser(), tty: g.stdinIsTerminal()}
	v.p = &turnPrinter{out: g.stdout, errw: g.stderr, color: v.tty && isTerminal(os.Stdout), label: info.Agent}
	return v.run()
}

// attachList lists the sessions, like session list.
func attachList(g *globals, server string) error {
	src, err := openSessions(g, server, false)
	if err != nil {
		return err
	}
	defer src.close()
	list, err := src.list()
	if err != nil {
		return err
	}
	return printSessions(g, list, false)
}

// attachView shows a session as it happens and sends what the user types.
type attachView struct {
	g   *globals
	b   backend
	s   runtime.SessionInfo
	p   *turnPrinter
	you string // the sender id of this user's messages
	tty bool
	// live is true once the history is shown.
	live bool
	last outcome
	// pending are the approvals waiting for an answer; the next line typed
	// answers the oldest.
	pending []runtime.Event
}

func (v *attachView) run() error {
	// Every goroutine started here ends before run returns, so the
	// backend can be closed after it.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fmt.Fprintf(v.g.stdout, "attached to session %s · agent %s · %s\n", v.s.ID, v.s.Agent, v.s.Status)
	events, followed := v.follow(ctx, &wg)
	interrupt := make(chan os.Signal, 1)
	signal.Notify(interrupt, os.Interrupt)
	defer signal.Stop(interrupt)
	lines := readLines(v.g.stdin)
	posted := make(chan error)
	if v.s.LastSeq <= 1 {
		v.goLive()
	}
	for {
		select {
		case e := <-events:
			v.show(&e)
		case err := <-followed:
			v.p.endLine()
			return fmt.Errorf("lost the session's events: %w", err)
		case <-interrupt:
			v.report(v.b.cancel(ctx, v.s.ID))
		case err := <-posted:
			v.report(err)
		case l, ok := <-lines:
			l = strings.TrimSpace(l)
			if !ok || l == "/quit" || l == "/exit" {
				v.p.endLine()
				fmt.Fprintf(v.g.stdout, "detached; the session goes on: agnx-lite attach %s\n", v.s.ID)
				return nil
			}
			if l == "" {
				continue
			}
			if len(v.pending) > 0 {
				v.answer(ctx, &wg, l, posted)
				continue
			}
			v.post(ctx, &wg, l, posted)
		}
	}
}

// follow runs the backend's follow in a goroutine, handing its events
// over a channel.
func (v *attachView) follow(ctx context.Context, wg *sync.WaitGroup) (<-chan runtime.Event, <-chan error) {
	events := make(chan runtime.Event, 64)
	followed := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		followed <- v.b.follow(ctx, v.s.ID, func(e runtime.Event) error {
			select {
			case events <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return events, followed
}

// post sends a message without waiting for its turn, which is shown as
// the session's events come.
func (v *attachView) post(ctx context.Context, wg *sync.WaitGroup, msg string, posted chan<- error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := v.b.post(ctx, v.s.ID, msg)
		select {
		case posted <- err:
		case <-ctx.Done():
		}
	}()
}

// answer takes a line as the decision on the oldest pending approval.
func (v *attachView) answer(ctx context.Context, wg *sync.WaitGroup, line string, done chan<- error) {
	d, ok := parseDecision(line)
	if !ok {
		a := v.pending[0]
		fmt.Fprintln(v.g.stderr, v.p.yellow("answer o (allow once), a (always) or d (deny) for "+a.ToolName+" "+oneLine(a.Content)))
		return
	}
	callID := v.pending[0].CallID
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := v.b.approve(ctx, v.s.ID, callID, d)
		select {
		case done <- err:
		case <-ctx.Done():
		}
	}()
}

func (v *attachView) report(err error) {
	if err != nil {
		fmt.Fprintln(v.g.stderr, v.p.red("error: "+err.Error()))
	}
}

// show prints one event: the same lines as chat, with who speaks.
func (v *attachView) show(e *runtime.Event) {
	if !v.live && e.Seq > v.s.LastSeq {
		v.goLive()
	}
	switch e.Type {
	case runtime.EvSessionStart, runtime.EvSessionEnd:
		// The header said whose session it is: a session's start and end
		// are not lines of the conversation.
	case runtime.EvUserMessage:
		v.p.endLine()
		who := "you"
		if e.SenderID != v.you {
			who = e.SenderID
			if who == "" {
				who = "user"
			}
		}
		fmt.Fprintf(v.g.stdout, "%s> %s\n", who, e.Content)
	case runtime.EvApprovalRequired:
		v.pending = append(v.pending, *e)
		v.p.event(e, &v.last)
	case runtime.EvApprovalDecision:
		v.pending = slices.DeleteFunc(v.pending, func(p runtime.Event) bool { return p.CallID == e.CallID })
		v.p.event(e, &v.last)
	case runtime.EvToken, runtime.EvAssistant, runtime.EvToolCall, runtime.EvToolResult,
		runtime.EvToolProgress, runtime.EvError, runtime.EvTurnEnd,
		runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// The turn printer shows them as chat does, and skips what chat
		// skips.
		fallthrough
	default:
		if v.p.event(e, &v.last) {
			v.last = outcome{}
		}
	}
	if !v.live && e.Seq == v.s.LastSeq {
		v.goLive()
	}
}

func (v *attachView) goLive() {
	v.live = true
	v.p.endLine()
	fmt.Fprintln(v.g.stdout, v.p.dim("-- live: type a message to send it · Ctrl-C stops a reply · Ctrl-D or /quit detaches"))
}
