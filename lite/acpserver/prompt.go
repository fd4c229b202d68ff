package acpserver

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Prompt runs one turn: the prompt becomes a user message, the turn's
// events become session/update notifications, and its end the stop
// reason. When the prompt's context is cancelled (session/cancel,
// $/cancel_request, or a newer prompt on the session, as the SDK does)
// the turn is cancelled and the prompt answered cancelled once its
// turn_end is in; when the client went away it is left to the agent's
// on_disconnect.
func (s *server) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	ss := s.get(string(p.SessionId))
	if ss == nil {
		return acp.PromptResponse{}, reqErr(codeNotFound, "no session "+string(p.SessionId)+" on this connection: create one with session/new or load it with session/load")
	}
	msg, err := promptText(p.Prompt, s.o.MaxPrompt)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	select {
	case ss.turn <- struct{}{}:
	case <-ctx.Done():
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	defer func() { <-ss.turn }()
	s.turns.Add(1)
	defer s.turns.Done()
	return s.runTurn(ctx, ss, msg)
}

func (s *server) runTurn(ctx context.Context, ss *session, msg string) (acp.PromptResponse, error) {
	follow, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	cancelled := make(chan struct{})
	go s.watchCancel(ctx, follow, stop, ss.id, cancelled)
	t := &turn{s: s, sid: acp.SessionId(ss.id), ctx: follow}
	err := s.b.Turn(follow, ss.id, msg, t.event)
	t.close()
	wasCancelled := isClosed(cancelled)
	switch {
	case t.end == "" && wasCancelled:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case t.end == "" && err != nil:
		return acp.PromptResponse{}, reqErr(codeInternal, err.Error())
	case t.end == "":
		return acp.PromptResponse{}, reqErr(codeInternal, "the turn stopped without an end: load the session to see what it did")
	}
	return t.response(wasCancelled)
}

// watchCancel cancels the turn when the prompt's context ends while the
// client is still there, and stops following it CancelGrace later.
func (s *server) watchCancel(ctx, follow context.Context, stop context.CancelFunc, sid string, cancelled chan struct{}) {
	select {
	case <-follow.Done():
		return
	case <-ctx.Done():
	}
	select {
	case <-s.conn.Done():
		stop() // the client went away: the agent's on_disconnect decides
		return
	default:
	}
	close(cancelled)
	cctx, cancel := context.WithTimeout(follow, 5*time.Second)
	if err := s.b.Cancel(cctx, sid); err != nil {
		s.log.Warn("acp cancel failed", "session", sid, "err", err)
	}
	cancel()
	t := time.NewTimer(s.o.CancelGrace)
	defer t.Stop()
	select {
	case <-t.C:
		stop()
	case <-follow.Done():
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// response says how the turn ended: a stop reason, or a JSON-RPC error
// with the turn's error sentence.
func (t *turn) response(cancelled bool) (acp.PromptResponse, error) {
	switch t.end {
	case runtime.TurnCompleted:
		stop := acp.StopReasonEndTurn
		for _, e := range t.errs {
			if e.Code == runtime.CodeToolLimit {
				stop = acp.StopReasonMaxTurnRequests
			}
			// A note the turn ended with (the history was trimmed): the
			// user reads it with the answer.
			_ = t.s.update(t.ctx, t.sid, acp.UpdateAgentMessageText("\n\n"+e.Content))
		}
		return acp.PromptResponse{StopReason: stop}, nil
	case runtime.TurnCancelled, runtime.TurnPaused:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case runtime.TurnInterrupted:
		return acp.PromptResponse{}, reqErr(codeInternal, "agnx-lite stopped during the turn; it goes on when agnx-lite is back: load the session to see the answer")
	}
	if cancelled {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	msg := "the turn failed: see the log of agnx-lite for why"
	code := ""
	if n := len(t.errs); n > 0 {
		msg, code = t.errs[n-1].Content, t.errs[n-1].Code
	}
	return acp.PromptResponse{}, &acp.RequestError{Code: codeInternal, Message: msg, Data: map[string]string{"code": code}}
}

// promptText turns a prompt's blocks into the user message: text as it
// is, a resource link as a Markdown link, an embedded text resource
// inline after its URI. Images, audio and binary resources are refused
// (promptCapabilities does not offer them).
func promptText(blocks []acp.ContentBlock, max int) (string, error) {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			b.WriteString("[" + c.ResourceLink.Name + "](" + c.ResourceLink.Uri + ")")
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			b.WriteString("\n\n<file uri=" + strconv.Quote(r.Uri) + ">\n" + r.Text + "\n</file>\n\n")
		case c.Resource != nil:
			return "", reqErr(codeInvalidParams, "binary resources are not supported: attach text files, or link them")
		default:
			return "", reqErr(codeInvalidParams, "images and audio are not supported by this agent: send text")
		}
		if b.Len() > max {
			return "", reqErr(codeInvalidParams, "the prompt is over "+sizeText(max)+": send less text, or link large files instead of embedding them")
		}
	}
	msg := strings.TrimRightFunc(b.String(), unicode.IsSpace)
	if strings.TrimSpace(msg) == "" {
		return "", reqErr(codeInvalidParams, "the prompt is empty: type something to send")
	}
	return msg, nil
}

func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}
