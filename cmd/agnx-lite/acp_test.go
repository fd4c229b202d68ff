package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// acpText is an ACP client that keeps the agent's message text.
type acpText struct {
	mu   sync.Mutex
	text strings.Builder
}

func (c *acpText) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
		c.mu.Lock()
		c.text.WriteString(m.Content.Text.Text)
		c.mu.Unlock()
	}
	return nil
}

func (c *acpText) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.text.String()
	c.text.Reset()
	return s
}

func (c *acpText) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId("allow_once"))}, nil
}

func (c *acpText) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (c *acpText) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (c *acpText) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (c *acpText) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (c *acpText) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (c *acpText) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (c *acpText) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// jsonLines checks, as it passes them on, that the lines the command
// writes to standard output are JSON objects only.
type jsonLines struct {
	t   *testing.T
	buf []byte
	w   io.Writer
}

func (j *jsonLines) Write(p []byte) (int, error) {
	j.buf = append(j.buf, p...)
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 {
			break
		}
		line := j.buf[:i]
		var m map[string]any
		assert.NoError(j.t, json.Unmarshal(line, &m), "stdout carries only JSON-RPC: %q", line)
		j.buf = j.buf[i+1:]
	}
	return j.w.Write(p)
}

// acpRun is agnx-lite acp running in this process, driven by the Go
// SDK's client.
type acpRun struct {
	conn   *acp.ClientSideConnection
	client *acpText
	in     *io.PipeWriter
	errb   *syncBuffer
	exited chan int
}

func (c *cli) acp(t *testing.T) *acpRun {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &acpRun{client: &acpText{}, in: inW, errb: newSyncBuffer(), exited: make(chan int, 1)}
	go func() {
		code := runWith(&globals{stdin: inR, stdout: &jsonLines{t: t, w: outW}, stderr: r.errb}, c.args([]string{"acp", "-v"}))
		outW.Close()
		r.exited <- code
	}()
	r.conn = acp.NewClientSideConnection(r.client, inW, outR)
	r.conn.SetLogger(slog.New(slog.DiscardHandler))
	return r
}

// close ends the input and waits for the command to exit 0.
func (r *acpRun) close(t *testing.T) {
	r.in.Close()
	select {
	case code := <-r.exited:
		assert.Equal(t, 0, code, r.errb.String())
	case <-time.After(time.Minute):
		t.Fatal("agnx-lite acp did not exit when its input ended")
	}
}

// agnx-lite acp serves the agent in-process, or through the daemon when
// one runs (as chat does): prompts, permission requests answered as
// approvals, and session/load by a later run. Its sessions are "acp"
// ones, and nothing but JSON-RPC reaches standard output.
func TestCLI_ACP(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "daemon"}[viaDaemon], func(t *testing.T) {
			c := askingCLI(t, llmtest.Echo(), viaDaemon)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r := c.acp(t)
			init, err := r.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
			require.NoError(t, err, r.errb.String())
			assert.Equal(t, "agnx-lite", init.AgentInfo.Name)
			s, err := r.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}})
			require.NoError(t, err, r.errb.String())
			for _, msg := range []string{"hi from an editor", "use list_dir {}"} {
				resp, err := r.conn.Prompt(ctx, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock(msg)}})
				require.NoError(t, err, r.errb.String())
				assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
			}
			assert.Equal(t, "echo: hi from an editorlist_dir said: . is empty", r.client.take(), "the call was allowed once")
			r.close(t)
			assert.Contains(t, r.errb.String(), `"msg":"acp session created"`, "logs go to stderr")

			r = c.acp(t)
			_, err = r.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
			require.NoError(t, err, r.errb.String())
			_, err = r.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: "/", McpServers: []acp.McpServer{}})
			require.NoError(t, err, r.errb.String())
			assert.Equal(t, "echo: hi from an editorlist_dir said: . is empty", r.client.take(), "the history replayed")
			r.close(t)

			code, out, errs := c.run("session", "list")
			require.Equal(t, 0, code, errs)
			assert.Regexp(t, string(s.SessionId)+`\s+assistant\s+`+acpserver.Gateway+`\s`, out)
			code, out, errs = c.run("session", "show", string(s.SessionId))
			require.Equal(t, 0, code, errs)
			assert.Contains(t, out, "you> hi from an editor\nassistant> echo: hi from an editor")
		})
	}
}

// An agent that cannot be served fails at start, on stderr, with nothing
// on stdout.
func TestCLI_ACPUnknownAgent(t *testing.T) {
	for _, viaDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "daemon"}[viaDaemon], func(t *testing.T) {
			c := askingCLI(t, llmtest.Echo(), viaDaemon)
			var out bytes.Buffer
			code, errs := c.runIn(strings.NewReader(""), &out, "acp", "-a", "nope")
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "nope")
			assert.Empty(t, out.String())
		})
	}
}
