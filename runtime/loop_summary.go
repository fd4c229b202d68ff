package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/agnx-lite/agnx-lite/agents"
)

// Bounds of a summary call.
const (
	maxSummaryOutput   = 1024      // tokens the summary may take
	minSummaryOutput   = 64        // even for a tiny budget
	maxSummaryBytes    = 16 << 10  // of the summary kept; the rest is cut
	maxSummaryResult   = 2 << 10   // bytes of one tool result in the transcript
	maxSummaryArgs     = 512       // bytes of one call's arguments in it
	maxTranscriptBytes = 512 << 10 // of the whole transcript, newest kept
)

// summaryInstructions is the system prompt of a summary call.
const summaryInstructions = "You summarise a conversation between a user and an AI assistant so that the assistant can go on " +
	"without the older messages. Keep the facts, decisions, names, numbers, open tasks and the user's preferences; " +
	"drop greetings and repetition. If a summary of an even earlier part is given, merge it in. " +
	"Answer with the summary only, in plain text, at most %d words."

// summaryRequest asks the agent's model to summarise prev and msgs.
func summaryRequest(spec *agents.Agent, prev string, msgs []Message, budget int) *Request {
	out := min(max(budget/4, minSummaryOutput), maxSummaryOutput)
	return &Request{
		Model:           spec.Model.Name,
		System:          fmt.Sprintf(summaryInstructions, out*3/4),
		Messages:        []Message{{Role: RoleUser, Content: transcript(prev, msgs)}},
		Temperature:     spec.Model.Temperature,
		MaxOutputTokens: out,
		ContextTokens:   spec.Model.MaxInputTokens,
		KeepAlive:       spec.Model.KeepAlive,
	}
}

// transcript renders the messages a summary replaces as plain text, the
// previous summary first. Tool results and arguments are cut short, and
// a transcript over maxTranscriptBytes loses its oldest lines.
func transcript(prev string, msgs []Message) string {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Summary of the conversation before:\n")
		b.WriteString(prev)
		b.WriteString("\n\nThe conversation since:\n")
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case RoleTool:
			fmt.Fprintf(&b, "tool %s result: %s\n", m.ToolName, cutRunes(m.Content, maxSummaryResult))
		case RoleAssistant:
			if m.Content != "" {
				fmt.Fprintf(&b, "assistant: %s\n", m.Content)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "assistant calls %s %s\n", c.Name, compactArgs(c.Arguments))
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
		}
	}
	s := b.String()
	if len(s) > maxTranscriptBytes {
		s = s[len(s)-maxTranscriptBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}

// compactArgs is a call's arguments on one line, cut short.
func compactArgs(args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) == nil {
		args = b.String()
	}
	return cutRunes(strings.ReplaceAll(args, "\n", " "), maxSummaryArgs)
}

// summaryText checks a summary call's answer: the summary, or why there
// is none.
func summaryText(resp *Response, err error, maxBytes int) (text, why string) {
	if err != nil {
		code, _ := describe(err)
		return "", "the summary call failed: " + code
	}
	text = strings.TrimSpace(resp.Message.Content)
	switch {
	case text == "":
		return "", "the model's summary was empty"
	case strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0:
		return "", "the model's summary held no text"
	}
	return cutRunes(text, min(maxBytes, maxSummaryBytes)), ""
}

// summaryWorker runs one summary call off the loop goroutine and posts
// its answer back.
type summaryWorker struct {
	l       *Loop
	sid     string
	c       *compaction
	agent   *LoadedAgent
	req     *Request
	timeout time.Duration
}

func (w *summaryWorker) run(ctx context.Context) {
	defer w.l.wg.Done()
	callCtx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	start := time.Now()
	resp, err := w.agent.Provider.Stream(callCtx, w.req, func(Delta) {})
	if o := w.l.opts.Observer; o != nil && ctx.Err() == nil {
		o.ModelCalled(w.agent.Spec.Name, providerName(w.agent.Provider), time.Since(start), err)
	}
	if err == nil && resp == nil {
		err = errors.New("the provider returned no answer")
	}
	_ = w.l.post(context.Background(), &summaryDone{sid: w.sid, c: w.c, agent: w.agent, resp: resp, err: err})
}

type summaryDone struct {
	sid   string
	c     *compaction
	agent *LoadedAgent
	resp  *Response
	err   error
}

// handle records the summary, or a trim when there is none. The cut is
// the mark the call's prefix ended at; only events after it were added
// meanwhile (a turn waits), so it still stands unless the session was
// dropped and loaded again.
func (r *summaryDone) handle(l *Loop) {
	s := l.sessions[r.sid]
	if s == nil || s.compacting != r.c {
		return
	}
	if r.err != nil && l.runCtx.Err() != nil {
		failCompaction(s, ErrClosed) // shutting down: the next turn end compacts
		return
	}
	if r.resp != nil {
		// Its tokens were spent whether or not the summary is usable.
		l.noteUsage(s, r.agent, r.resp.Usage)
	}
	text, why := summaryText(r.resp, r.err, r.c.maxBytes)
	i := s.st.markIndex(r.c.upto)
	if why == "" && i < 0 {
		why = "the conversation changed meanwhile"
	}
	if why != "" {
		l.log.Warn("no summary of the history", "session", r.sid, "why", why, "err", r.err)
		l.trimInstead(s, r.c, why)
		return
	}
	e := s.st.compactionEvent(s.st.planAt(i), CompactSummary, text)
	e.Usage = r.resp.Usage
	l.record(s, e)
	l.endCompaction(s, r.c, resultOf(&e))
}
