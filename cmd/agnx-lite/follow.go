package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// turnPrinter prints one turn's events as they arrive: the answer streams
// to out, tool activity and errors go to errw.
type turnPrinter struct {
	out, errw io.Writer
	color     bool
	// printed is the answer text streamed in the current model round, to
	// reconcile with the final message (tokens are lossy).
	printed strings.Builder
	// midLine is true when the cursor is not at the start of a line.
	midLine bool
	// keepErrors leaves error events to the caller, which reports the
	// turn's failure once.
	keepErrors bool
	// ask, when set, is told of each approval the turn waits for; it must
	// not wait for the user.
	ask func(runtime.Event)
	// noPrompt leaves out the "answer o, a or d" prompt: ask answers
	// without asking.
	noPrompt bool
	// label, when set, starts each answer with "label> " (attach, where
	// several voices share the screen).
	label    string
	labelled bool
}

// outcome is how a turn ended.
type outcome struct {
	reason string // runtime.TurnCompleted, ...
	err    string // the last error event's message
	// answered is set once a model said anything in the turn: an answer,
	// a tool call.
	answered bool
}

// follow prints events until the turn ends. interrupt, when it fires,
// cancels the turn (the loop then sends turn_end{cancelled}).
func (p *turnPrinter) follow(ctx context.Context, sub *runtime.Subscription, interrupt <-chan os.Signal, cancel func()) (outcome, error) {
	var last outcome
	for {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-interrupt:
			cancel()
		case e, ok := <-sub.C():
			if !ok {
				if last.err != "" {
					return last, errors.New(last.err)
				}
				return last, followEnded(sub)
			}
			if done := p.event(&e, &last); done {
				return last, nil
			}
		}
	}
}

// followEnded says why a subscription closed under its reader.
func followEnded(sub *runtime.Subscription) error {
	switch {
	case sub.Err() != nil:
		return sub.Err()
	case sub.Deleted():
		return errors.New("the session was deleted: start a new one")
	}
	return errors.New("the runtime stopped before the turn ended: see the answer with \"agnx-lite session show\" once it is back")
}

func (p *turnPrinter) event(e *runtime.Event, last *outcome) (done bool) {
	switch e.Type {
	case runtime.EvToken:
		p.write(e.Content)
		p.printed.WriteString(e.Content)
	case runtime.EvAssistant:
		if e.Origin != "" { // a notice: on its own line, the answer's stream left alone
			p.notice(e)
			return false
		}
		last.answered = true
		shown := p.printed.String()
		if rest, ok := strings.CutPrefix(e.Content, shown); ok {
			p.write(rest)
		} else if shown == "" {
			p.write(e.Content)
		}
		p.printed.Reset()
		p.labelled = false
	case runtime.EvToolCall:
		last.answered = true
		p.endLine()
		fmt.Fprintf(p.errw, "%s\n", p.dim("  ⚙ "+e.ToolName+" "+oneLine(e.Arguments)))
	case runtime.EvToolResult:
		status := "ok"
		if !e.Success {
			status = "failed"
		}
		fmt.Fprintf(p.errw, "%s\n", p.dim("  ↳ "+status+": "+oneLine(e.Content)))
	case runtime.EvApprovalRequired:
		p.endLine()
		prompt := " — answer o (allow once), a (always, this session) or d (deny)"
		if p.noPrompt {
			prompt = ""
		}
		fmt.Fprintf(p.errw, "%s\n", p.yellow("approval needed: "+e.ToolName+" "+oneLine(e.Content)+prompt))
		if p.ask != nil {
			p.ask(*e)
		}
	case runtime.EvApprovalDecision:
		fmt.Fprintf(p.errw, "%s\n", p.dim("  ↳ "+strings.ReplaceAll(e.Decision, "_", " ")+" ("+e.Reason+")"))
	case runtime.EvToolProgress:
		p.endLine()
		fmt.Fprintf(p.errw, "%s\n", p.dim("  … "+oneLine(e.Content)))
	case runtime.EvError:
		p.endLine()
		if runtime.Advisory(e.Code) { // a notice: the turn went on
			fmt.Fprintf(p.errw, "%s\n", p.yellow("note: "+e.Content))
			break
		}
		last.err = e.Content
		if !p.keepErrors {
			fmt.Fprintf(p.errw, "%s\n", p.red("error: "+e.Content))
		}
	case runtime.EvTurnEnd:
		p.endLine()
		p.labelled = false
		last.reason = e.Reason
		if e.Reason == runtime.TurnCancelled {
			fmt.Fprintf(p.errw, "%s\n", p.dim("(cancelled)"))
		}
		return true
	case runtime.EvSessionStart, runtime.EvSessionEnd, runtime.EvUserMessage,
		runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// session_start and session_end say nothing about a turn; the
		// user's own message is what they just typed; a silent message is
		// group chatter kept out of the conversation, and a compaction
		// changes what the model is sent, not what was said.
	}
	return false
}

func (p *turnPrinter) write(s string) {
	if s == "" {
		return
	}
	if p.label != "" && !p.labelled {
		p.endLine()
		io.WriteString(p.out, p.label+"> ")
		p.labelled = true
	}
	io.WriteString(p.out, s)
	p.midLine = !strings.HasSuffix(s, "\n")
}

func (p *turnPrinter) endLine() {
	if p.midLine {
		io.WriteString(p.out, "\n")
		p.midLine = false
	}
}

func (p *turnPrinter) dim(s string) string {
	if !p.color {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

func (p *turnPrinter) yellow(s string) string {
	if !p.color {
		return s
	}
	return "\x1b[33m" + s + "\x1b[0m"
}

func (p *turnPrinter) red(s string) string {
	if !p.color {
		return s
	}
	return "\x1b[31m" + s + "\x1b[0m"
}

// notice prints what the agent's side said outside the turn (a reminder,
// a finished process) on lines of its own, to stderr, so that an answer
// being streamed to stdout is not cut.
func (p *turnPrinter) notice(e *runtime.Event) {
	p.endLine()
	fmt.Fprintf(p.errw, "%s\n", p.yellow("["+e.Origin+"] "+e.Content))
}
