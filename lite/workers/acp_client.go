package workers

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/coder/acp-go-sdk"
)

// maxFinalText bounds the worker's final message kept in Outcome.Text.
const maxFinalText = 64 << 10

// acpClient is the client side of one run: it collects the final
// message, turns the agent's updates into progress lines, and answers
// its file and permission requests. The SDK calls it from its own
// goroutines; runCtx is the tool call's (runtime.Ask and Progress need
// it), not the request's.
type acpClient struct {
	worker string
	runCtx context.Context
	ask    askFunc
	fs     *workFS
	prog   *progress

	mu        sync.Mutex
	session   acp.SessionId
	prompting bool // updates before the prompt replay a loaded session
	text      strings.Builder
	fresh     bool // a tool call came since the last text: the next text starts the final message
	textCut   bool
}

var _ acp.Client = (*acpClient)(nil)

func (c *acpClient) start(s acp.SessionId) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session, c.prompting = s, true
}

// ours refuses requests for a session this run did not start.
func (c *acpClient) ours(s acp.SessionId) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == "" || s != c.session {
		return acp.NewInvalidParams(fmt.Sprintf("session %q is not this client's: use the session it created", cut(string(s), 64)))
	}
	return nil
}

func (c *acpClient) final() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.textCut {
		return c.text.String() + "\n[the rest of the worker's message was cut]"
	}
	return c.text.String()
}

func (c *acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	live := c.prompting && n.SessionId == c.session
	c.mu.Unlock()
	if !live {
		return nil
	}
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			c.addText(t.Text)
		}
	case u.ToolCall != nil:
		c.markTool()
		c.prog.say(toolLine(string(u.ToolCall.Kind), u.ToolCall.Title))
	case u.ToolCallUpdate != nil:
		if st := u.ToolCallUpdate.Status; st != nil && *st == acp.ToolCallStatusFailed {
			title := string(u.ToolCallUpdate.ToolCallId)
			if u.ToolCallUpdate.Title != nil {
				title = *u.ToolCallUpdate.Title
			}
			c.prog.say("failed: " + title)
		}
	case u.Plan != nil:
		c.prog.say(planLine(u.Plan.Entries))
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			c.prog.say("thinking: " + strings.TrimSpace(t.Text))
		}
	}
	return nil
}

func (c *acpClient) addText(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fresh {
		c.text.Reset()
		c.fresh, c.textCut = false, false
	}
	if room := maxFinalText - c.text.Len(); len(s) > room {
		s, c.textCut = cut(s, max(room, 0)), true
		s = strings.TrimSuffix(s, "…")
	}
	c.text.WriteString(s)
}

func (c *acpClient) markTool() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = c.text.Len() > 0
}

func toolLine(kind, title string) string {
	if kind == "" || kind == string(acp.ToolKindOther) {
		return title
	}
	return kind + ": " + title
}

func planLine(es []acp.PlanEntry) string {
	done := 0
	now := ""
	for _, e := range es {
		switch e.Status {
		case acp.PlanEntryStatusCompleted:
			done++
		case acp.PlanEntryStatusInProgress:
			now = first(now, e.Content)
		}
	}
	line := fmt.Sprintf("plan: %d of %d steps done", done, len(es))
	if now != "" {
		line += "; now: " + now
	}
	return line
}

func (c *acpClient) RequestPermission(hctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	if err := c.ours(p.SessionId); err != nil {
		return acp.RequestPermissionResponse{}, err
	}
	ctx, cancel := context.WithCancel(c.runCtx)
	defer cancel()
	stop := context.AfterFunc(hctx, cancel) // the agent withdrew the request, or the connection ended
	defer stop()
	qs := readings(c.worker, c.fs.inside, p.ToolCall)
	c.prog.say("asking: " + qs[0].Tool + " " + qs[0].Subject)
	return acp.RequestPermissionResponse{Outcome: permit(ctx, c.ask, qs, p.Options)}, nil
}

func (c *acpClient) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	if err := c.ours(p.SessionId); err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	return c.fs.read(p)
}

func (c *acpClient) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	if err := c.ours(p.SessionId); err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	c.prog.say("write: " + p.Path)
	return c.fs.write(p)
}

// The client offers no terminal (clientCapabilities.terminal false):
// the agent runs commands with its own tools, inside the sandbox.
var errNoTerminal = acp.NewMethodNotFound("terminal")

func (c *acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, errNoTerminal
}

func (c *acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, errNoTerminal
}

func (c *acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, errNoTerminal
}

func (c *acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, errNoTerminal
}

func (c *acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, errNoTerminal
}
