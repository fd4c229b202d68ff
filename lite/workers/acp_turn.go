package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coder/acp-go-sdk"
)

// acpTurn is one run's conversation with the agent.
type acpTurn struct {
	r      *ACPRunner
	conn   *acp.ClientSideConnection
	cl     *acpClient
	proc   Process
	guard  *lineGuard
	inside string
}

func (t *acpTurn) run(ctx context.Context, job Job) (Outcome, error) {
	ir, err := t.conn.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		},
		ClientInfo: &acp.Implementation{Name: "agnx-lite", Version: "1"},
	})
	if err != nil {
		return Outcome{}, err
	}
	sid, note, err := t.session(ctx, ir.AgentCapabilities.LoadSession, job.Resume)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{SessionID: string(sid)}
	t.cl.start(sid)
	pr, err := t.prompt(ctx, sid, job.Prompt)
	out.Text = note + t.cl.final()
	if err != nil {
		return out, err
	}
	out.Stop = string(pr.StopReason)
	return out, nil
}

// session loads the session to resume when the agent can, else starts a
// new one and says why in note, which heads the outcome's text.
func (t *acpTurn) session(ctx context.Context, canLoad bool, resume string) (acp.SessionId, string, error) {
	note := ""
	if resume != "" {
		if !canLoad {
			note = fmt.Sprintf("[could not resume session %s: the agent cannot load sessions, so this is a new one]\n", resume)
		} else {
			_, err := t.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: acp.SessionId(resume), Cwd: t.inside,
				McpServers: []acp.McpServer{}})
			if err == nil {
				return acp.SessionId(resume), "", nil
			}
			if t.dead(ctx) {
				return "", "", err
			}
			note = fmt.Sprintf("[could not resume session %s (%s), so this is a new one]\n", resume, cut(err.Error(), 120))
		}
	}
	ns, err := t.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: t.inside, McpServers: []acp.McpServer{}})
	if err != nil {
		return "", "", err
	}
	if ns.SessionId == "" {
		return "", "", errors.New("the agent gave no session id")
	}
	return ns.SessionId, note, nil
}

// dead says the run cannot go on: ctx ended or the connection did.
func (t *acpTurn) dead(ctx context.Context) bool {
	select {
	case <-t.conn.Done():
		return true
	default:
		return ctx.Err() != nil
	}
}

type promptResult struct {
	pr  acp.PromptResponse
	err error
}

// prompt sends the task and waits for the turn to end. When ctx is
// cancelled (not timed out) the agent is asked to stop with
// session/cancel and given a moment to end its turn, so its session
// stays resumable; the caller kills it either way.
func (t *acpTurn) prompt(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	done := make(chan promptResult, 1)
	go func() {
		pr, err := t.conn.Prompt(pctx, acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		done <- promptResult{pr, err}
	}()
	select {
	case res := <-done:
		return res.pr, res.err
	case <-ctx.Done():
	}
	if errors.Is(context.Cause(ctx), errTimeout) {
		return acp.PromptResponse{}, context.Cause(ctx)
	}
	go func() { _ = t.conn.Cancel(pctx, acp.CancelNotification{SessionId: sid}) }()
	timer := time.NewTimer(t.r.grace)
	defer timer.Stop()
	select {
	case res := <-done:
		if res.err == nil {
			return res.pr, ctx.Err()
		}
	case <-timer.C:
	case <-t.proc.Done():
	}
	return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, ctx.Err()
}
