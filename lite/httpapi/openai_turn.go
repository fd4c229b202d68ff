package httpapi

import (
	"context"
	"errors"
	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"net/http"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// oaCall is one chat completion request whose message was sent: it
// follows the message's turn and answers.
type oaCall struct {
	s       *Server
	sid     string
	sub     *runtime.Subscription
	f       *turnFollower
	id      string
	model   string
	created int64
	// ping, when set, is called while the turn is quiet (every
	// Options.KeepAlive): a stream's keep-alive comment.
	ping func() error
	// wait leaves approvals for a person to answer (ApprovalsHeader).
	wait bool
}

// oaOutcome is how the turn went.
type oaOutcome struct {
	answer  string // the turn's last answer (a model call without tool calls)
	round   string // the tokens streamed since the last model call ended
	usage   runtime.Usage
	reason  string // the turn_end's reason
	errMsg  string
	errCode string
	denied  bool // a call needed an approval and was denied
}

var (
	errSubGone = errors.New("subscription ended")
	errClosing = errors.New("the daemon is shutting down: send the message again once it is back")
)

// follow reads the turn's events until its turn_end, passing each piece
// of the answer to tok (nil: none wanted). A call waiting for a decision
// is denied at once, since the client cannot answer it, unless the client
// asked to wait for a person to answer it elsewhere. It returns ctx's error
// when the client leaves or the wait is too long, errSubGone when the
// subscription ended, errClosing when the server closes.
func (c *oaCall) follow(ctx context.Context, out *oaOutcome, tok func(string) error) error {
	var tick <-chan time.Time
	if c.ping != nil && c.s.o.KeepAlive > 0 {
		t := time.NewTicker(c.s.o.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.s.closing:
			c.sub.Close()
			return errClosing
		case <-tick:
			if err := c.ping(); err != nil {
				return err
			}
		case e, open := <-c.sub.C():
			if !open {
				return errSubGone
			}
			ours := c.f.ours() // before accept counts a turn_end
			keep, done := c.f.accept(&e)
			if !keep || !ours {
				continue
			}
			if err := c.take(ctx, out, &e, tok); err != nil {
				return err
			}
			if done {
				c.sub.Close()
				return nil
			}
		}
	}
}

// take notes what e says about the turn.
func (c *oaCall) take(ctx context.Context, out *oaOutcome, e *runtime.Event, tok func(string) error) error {
	switch e.Type {
	case runtime.EvToken:
		out.round += e.Content
		if tok != nil && e.Content != "" {
			return tok(e.Content)
		}
	case runtime.EvAssistant:
		if e.Origin != "" { // a notice is not the turn's answer
			return nil
		}
		round := out.round
		out.round = ""
		if len(e.ToolCalls) > 0 {
			return nil
		}
		out.answer = e.Content
		// Tokens are lossy and some providers stream none: what the
		// client missed of the answer's end is sent now.
		if rest, ok := strings.CutPrefix(e.Content, round); ok && rest != "" && tok != nil {
			return tok(rest)
		}
	case runtime.EvError:
		if e.Code != runtime.CodeHistoryTrimmed {
			out.errMsg, out.errCode = e.Content, e.Code
		}
	case runtime.EvApprovalRequired:
		if c.wait {
			c.s.log.Info("openai endpoint call waits for an approval", "session", c.sid, "tool", e.ToolName)
			return nil
		}
		out.denied = true
		err := c.s.o.Loop.Approve(ctx, c.sid, e.CallID, runtime.DenyCall)
		if err != nil && !errors.Is(err, runtime.ErrNoApproval) && !errors.Is(err, runtime.ErrOtherApproval) {
			return err
		}
		c.s.log.Info("openai endpoint denied a call that needed approval", "session", c.sid, "tool", e.ToolName)
	case runtime.EvTurnEnd:
		out.usage, out.reason = e.Usage, e.Reason
		if e.Reason == runtime.TurnFailed {
			// The caller's session is the endpoint's own: a first turn
			// that never reached a model leaves none (the next request
			// starts another). The client gets the error either way.
			if _, err := c.s.o.Loop.DiscardUnanswered(ctx, c.sid); err != nil {
				c.s.log.Debug("openai endpoint cannot remove an unanswered session", "session", c.sid, "err", err)
			}
		}
	case runtime.EvToolCall, runtime.EvToolResult, runtime.EvToolProgress, runtime.EvApprovalDecision,
		runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvSessionEnd,
		runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// Tool calls and results run server-side: the client sees the
		// answer; the rest is not part of it.
	}
	return nil
}

// failure returns the status, type, code and sentence of a turn that did
// not end with an answer, or status 0.
func (out *oaOutcome) failure() (int, string, string, string) {
	switch {
	case out.errCode == runtime.CodeTokenBudget:
		return http.StatusTooManyRequests, oaQuota, codeTokenBudget, out.errMsg
	case out.reason == runtime.TurnFailed, out.errCode == runtime.CodeToolLimit:
		msg := out.errMsg
		if msg == "" {
			msg = "the model call failed: see the daemon's log"
		}
		return http.StatusInternalServerError, oaServer, codeProvider, msg
	case out.reason == runtime.TurnCancelled:
		return http.StatusInternalServerError, oaServer, "cancelled", "the turn was cancelled in agnx-lite before it answered"
	case out.reason != runtime.TurnCompleted:
		return http.StatusInternalServerError, oaServer, "turn_" + out.reason,
			"the turn ended " + out.reason + " before it answered: send the message again"
	}
	return 0, "", "", ""
}

// content is the answer the client gets, with the note on denied calls.
func (out *oaOutcome) content() string { return out.answer + out.note() }

func (out *oaOutcome) note() string {
	if !out.denied {
		return ""
	}
	return "\n\n(agnx-lite: a tool call needed approval and was denied: " + oaDeniedNote + ")"
}

// complete waits for the turn and answers with a chat.completion.
func (c *oaCall) complete(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), c.s.o.RequestTimeout)
	defer cancel()
	var out oaOutcome
	if err := c.follow(ctx, &out, nil); err != nil {
		c.abandon(w, r, err)
		return
	}
	if status, typ, code, msg := out.failure(); status != 0 {
		writeOAError(w, status, typ, code, "", msg)
		return
	}
	content, stop := out.content(), "stop"
	u := toUsage(out.usage)
	writeJSON(w, http.StatusOK, oaCompletion{ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices: []oaChoice{{Message: &oaOut{Role: "assistant", Content: &content}, FinishReason: &stop}}, Usage: &u})
}

// abandon answers, when it still can, a request whose turn it stopped
// following before the end.
func (c *oaCall) abandon(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errSubGone):
		writeOAError(w, http.StatusServiceUnavailable, oaServer, "", "", c.goneReason())
	case errors.Is(err, errClosing):
		writeOAError(w, http.StatusServiceUnavailable, oaServer, "", "", err.Error())
	case r.Context().Err() != nil:
		c.s.clientGone(c.sub, c.sid)
	case errors.Is(err, context.DeadlineExceeded):
		c.s.clientGone(c.sub, c.sid)
		writeOAError(w, http.StatusGatewayTimeout, oaServer, codeTimeout, "",
			"the turn did not end within server.request_timeout_seconds: it goes on in session "+c.sid)
	default:
		c.sub.Close()
		writeOAError(w, http.StatusInternalServerError, oaServer, "", "", err.Error())
	}
}

func (c *oaCall) goneReason() string {
	switch {
	case c.sub.Deleted():
		return deletedMidTurn(c.sid)
	case c.sub.Err() != nil:
		return c.sub.Err().Error()
	}
	return "the runtime stopped before the turn ended: send the message again once the daemon is back"
}

// chunk is one chat.completion.chunk, written with jsonw as the other
// SSE data are: it is sent once per token. A nil delta and finish give
// no choice (the usage chunk).
func (c *oaCall) chunk(delta *oaOut, finish *string, usage *usageJSON) []byte {
	w := jsonw.Writer{B: make([]byte, 0, 160)}
	w.Object()
	w.Key("id").String(c.id)
	w.Key("object").String("chat.completion.chunk")
	w.Key("created").Int(c.created)
	w.Key("model").String(c.model)
	w.Key("choices").Array()
	if delta != nil || finish != nil {
		w.Object()
		w.Key("index").Int(0)
		w.Key("delta").Object()
		if delta != nil {
			w.OptString("role", delta.Role)
			if delta.Content != nil {
				w.Key("content").String(*delta.Content)
			}
		}
		w.EndObject()
		w.Key("finish_reason")
		if finish != nil {
			w.String(*finish)
		} else {
			w.Null()
		}
		w.Key("logprobs").Null()
		w.EndObject()
	}
	w.EndArray()
	if usage != nil {
		w.Key("usage").Object()
		w.Key("prompt_tokens").Int(int64(usage.Prompt))
		w.Key("completion_tokens").Int(int64(usage.Completion))
		w.Key("total_tokens").Int(int64(usage.Total))
		w.EndObject()
	}
	return w.EndObject().B
}
