package acpserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/acpserver"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
)

// asker is a long call, as a coding worker is: it says what it does
// (runtime.Progress) and asks before a command (runtime.Ask).
type asker struct{}

func (asker) Spec() runtime.ToolSpec {
	return runtime.ToolSpec{Name: "asker", Description: "asks", Schema: []byte(`{"type":"object"}`)}
}

func (asker) Run(ctx context.Context, _ []byte) (runtime.Result, error) {
	runtime.Progress(ctx, "about to ask")
	d, err := runtime.Ask(ctx, runtime.Question{Tool: "bash", Subject: "rm -rf build"})
	if err != nil {
		return runtime.ErrorResult("ask failed: " + err.Error()), nil
	}
	return runtime.Result{Content: "decision " + d}, nil
}

type agentsOf map[string]*runtime.LoadedAgent

func (l agentsOf) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	if a, ok := l[name]; ok {
		return a, nil
	}
	return nil, errors.New("no agent " + name)
}

// A call's progress shows as its content, and a question it asks from
// inside (runtime.Ask) reaches the editor as a call of its own with a
// permission request; the answer is the question's decision.
func TestServe_ProgressAndQuestionsFromInsideACall(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	dir := t.TempDir()
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o700))
	agent := &runtime.LoadedAgent{
		Spec: &agents.Agent{Name: "coder", Workspace: ws, Model: agents.Model{Provider: "ollama", Name: "m"},
			Session: agents.Session{MaxToolIterations: 4, LLMTimeoutSeconds: 30}},
		Provider: ollama.New(ollama.Options{BaseURL: fake.BaseURL(), HTTP: llm.Options{MaxAttempts: 1}}),
		Tools:    []runtime.Tool{asker{}},
		Policy:   &agents.Policy{Mode: "ask"},
	}
	loop := runtime.New(runtime.Options{Store: st, Agents: agentsOf{"coder": agent}})
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- loop.Run(ctx) }()
	<-loop.Ready()
	defer func() {
		stop()
		require.NoError(t, <-ran)
		require.NoError(t, st.Close())
	}()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- acpserver.Serve(context.Background(), &acpserver.Local{Loop: loop}, inR, outW, acpserver.Options{Agent: "coder"})
		outW.Close()
	}()
	client := newRecorder()
	client.answer = func(p acp.RequestPermissionRequest) acp.RequestPermissionOutcome {
		if strings.Contains(string(p.ToolCall.ToolCallId), ".") {
			return acp.NewRequestPermissionOutcomeSelected(runtime.DenyCall)
		}
		return acp.NewRequestPermissionOutcomeSelected(runtime.AllowOnce)
	}
	conn := acp.NewClientSideConnection(client, inW, outR)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = conn.Initialize(rctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	require.NoError(t, err)
	s, err := conn.NewSession(rctx, acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}})
	require.NoError(t, err)
	resp, err := conn.Prompt(rctx, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("use asker")}})
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)

	var lines, asked []string
	for _, l := range client.take() {
		if strings.HasPrefix(l, "permission ") {
			asked = append(asked, l) // handled beside the notifications, in no order with them
		} else {
			lines = append(lines, l)
		}
	}
	require.NotEmpty(t, lines)
	id := strings.Fields(lines[0])[1]
	assert.Equal(t, []string{
		"tool_call " + id + " other in_progress: asker",
		"tool_call_update " + id + " in_progress: ",
		"tool_call_update " + id + " in_progress: about to ask",
		"tool_call " + id + ".1 execute pending: bash rm -rf build",
		"tool_call_update " + id + ".1 failed: deny (user)",
		"tool_call_update " + id + " completed: decision deny",
	}, lines[:6])
	assert.Equal(t, "asker said: decision deny", text(lines[6:]))
	assert.Equal(t, []string{"permission " + id, "permission " + id + ".1"}, asked)

	inW.Close()
	require.NoError(t, <-served)
}
