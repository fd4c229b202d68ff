package acpserver_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// home is a data dir with the default agent, and a fake Ollama behind it.
type home struct {
	t    testing.TB
	cfg  *config.Config
	fake *llmtest.Server
}

func newHome(t testing.TB, h llmtest.Handler, policy string) *home {
	fake := llmtest.NewHandler(t, llmtest.Ollama, h)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	t.Setenv("AGNX_LITE_HOME", "")
	cfgPath := filepath.Join(t.TempDir(), "agnx.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("server:\n  port: 1\n"), 0o600))
	cfg, err := config.Locate(cfgPath, t.TempDir())
	require.NoError(t, err)
	_, err = config.Init(cfg)
	require.NoError(t, err)
	if policy != "" {
		require.NoError(t, os.WriteFile(filepath.Join(cfg.DataDir, "agents", cfg.Runtime.DefaultAgent, "policy.yaml"), []byte(policy), 0o644))
	}
	return &home{t: t, cfg: cfg, fake: fake}
}

// rig is the ACP server over an App opened on home, driven by the SDK's
// client side over pipes.
type rig struct {
	t      testing.TB
	app    *lite.App
	conn   *acp.ClientSideConnection
	client *recorder
	toSrv  *io.PipeWriter
	served chan error
}

func (h *home) start(o acpserver.Options) *rig {
	t := h.t
	app, err := lite.Open(h.cfg, nil)
	require.NoError(t, err)
	if o.Agent == "" {
		o.Agent = h.cfg.Runtime.DefaultAgent
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &rig{t: t, app: app, client: newRecorder(), toSrv: inW, served: make(chan error, 1)}
	go func() {
		err := acpserver.Serve(context.Background(), &acpserver.Local{Loop: app.Loop}, inR, outW, o)
		outW.Close()
		r.served <- err
	}()
	r.conn = acp.NewClientSideConnection(r.client, inW, outR)
	r.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(r.stop)
	return r
}

// stop ends the connection, waits for Serve and closes the App; it may be
// called more than once.
func (r *rig) stop() {
	if r.app == nil {
		return
	}
	r.toSrv.Close()
	select {
	case err := <-r.served:
		require.NoError(r.t, err)
	case <-time.After(30 * time.Second):
		r.t.Fatal("Serve did not return after its input ended")
	}
	require.NoError(r.t, r.app.Close())
	r.app = nil
}

func (r *rig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	r.t.Cleanup(cancel)
	return ctx
}

func (r *rig) initialize() acp.InitializeResponse {
	resp, err := r.conn.Initialize(r.ctx(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	require.NoError(r.t, err)
	return resp
}

func (r *rig) newSession() acp.SessionId {
	resp, err := r.conn.NewSession(r.ctx(), acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}})
	require.NoError(r.t, err)
	return resp.SessionId
}

func (r *rig) prompt(sid acp.SessionId, text string) (acp.PromptResponse, error) {
	return r.conn.Prompt(r.ctx(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
}

// recorder is the client: it keeps each update as a line of text and
// answers permission requests with answer.
type recorder struct {
	mu      sync.Mutex
	lines   []string
	asked   []acp.RequestPermissionRequest
	answer  func(acp.RequestPermissionRequest) acp.RequestPermissionOutcome
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (c *recorder) add(l string) {
	c.mu.Lock()
	c.lines = append(c.lines, l)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// take returns the lines so far and forgets them.
func (c *recorder) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.lines
	c.lines = nil
	return l
}

// waitFor waits until a line has prefix p.
func (c *recorder) waitFor(t *testing.T, p string) {
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		for _, l := range c.lines {
			if strings.HasPrefix(l, p) {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("no update %q in %q", p, c.take())
		}
	}
}

// text joins the agent's message chunks of lines.
func text(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if s, ok := strings.CutPrefix(l, "agent: "); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

func blockText(c acp.ContentBlock) string {
	if c.Text != nil {
		return c.Text.Text
	}
	return "<non-text>"
}

func toolText(cs []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil {
			b.WriteString(blockText(c.Content.Content))
		}
	}
	return b.String()
}

func (c *recorder) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	u := n.Update
	switch {
	case u.UserMessageChunk != nil:
		c.add("user: " + blockText(u.UserMessageChunk.Content))
	case u.AgentMessageChunk != nil:
		c.add("agent: " + blockText(u.AgentMessageChunk.Content))
	case u.ToolCall != nil:
		c.add("tool_call " + string(u.ToolCall.ToolCallId) + " " + string(u.ToolCall.Kind) + " " +
			string(u.ToolCall.Status) + ": " + u.ToolCall.Title)
	case u.ToolCallUpdate != nil:
		st := ""
		if u.ToolCallUpdate.Status != nil {
			st = string(*u.ToolCallUpdate.Status)
		}
		c.add("tool_call_update " + string(u.ToolCallUpdate.ToolCallId) + " " + st + ": " + toolText(u.ToolCallUpdate.Content))
	default:
		c.add("other")
	}
	return nil
}

func (c *recorder) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	answer := c.answer
	c.mu.Unlock()
	c.add("permission " + string(p.ToolCall.ToolCallId))
	if answer == nil {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return acp.RequestPermissionResponse{Outcome: answer(p)}, nil
}

func (c *recorder) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *recorder) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *recorder) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *recorder) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *recorder) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *recorder) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *recorder) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}
