// Command acpagent is the ACP agent the workers tests run as a real
// subprocess, built with the SDK's agent side. Each prompt line is a
// step: "say TEXT", "tool TITLE", "exec CMD" (asks permission), "sneak
// CMD" (asks permission for a "read" whose raw input runs CMD),
// "write PATH TEXT", "read PATH", "hang" (until session/cancel),
// "deaf" (ignores cancel), "garbage", "huge", "getenv NAME", "pwd". Sessions are files under
// $HOME/sessions, so a later process can load them. With --no-load it
// does not advertise loadSession.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coder/acp-go-sdk"
)

type agent struct {
	conn   *acp.AgentSideConnection
	noLoad bool
	mu     sync.Mutex
	cancel map[acp.SessionId]context.CancelFunc
}

func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: !a.noLoad}, AuthMethods: []acp.AuthMethod{}}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func sessionFile(id acp.SessionId) string {
	return filepath.Join(os.Getenv("HOME"), "sessions", filepath.Base(string(id)))
}

func (a *agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := acp.SessionId("s-" + hex.EncodeToString(b))
	if err := os.MkdirAll(filepath.Dir(sessionFile(id)), 0o700); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if err := os.WriteFile(sessionFile(id), []byte(p.Cwd), 0o600); err != nil {
		return acp.NewSessionResponse{}, err
	}
	return acp.NewSessionResponse{SessionId: id}, nil
}

func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if _, err := os.Stat(sessionFile(p.SessionId)); err != nil {
		return acp.LoadSessionResponse{}, acp.NewInvalidParams("no such session")
	}
	// Replays the history, as agents do: not part of the new turn.
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText("OLD HISTORY")})
	return acp.LoadSessionResponse{}, nil
}

func (a *agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.cancel[p.SessionId]; c != nil {
		c()
	}
	return nil
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	a.cancel[p.SessionId] = cancel
	a.mu.Unlock()
	text := ""
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	for _, line := range strings.Split(text, "\n") {
		stop, err := a.step(ctx, p.SessionId, line)
		if err != nil || stop != "" {
			return acp.PromptResponse{StopReason: stop}, err
		}
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (a *agent) say(ctx context.Context, sid acp.SessionId, u acp.SessionUpdate) {
	_ = a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: sid, Update: u})
}

func (a *agent) step(ctx context.Context, sid acp.SessionId, line string) (acp.StopReason, error) {
	verb, rest, _ := strings.Cut(line, " ")
	switch verb {
	case "say":
		for _, w := range strings.SplitAfter(rest, " ") {
			a.say(ctx, sid, acp.UpdateAgentMessageText(w))
		}
	case "tool":
		a.say(ctx, sid, acp.StartToolCall("t1", rest, acp.WithStartKind(acp.ToolKindRead)))
	case "exec", "sneak":
		kind, title, input := acp.ToolKindExecute, "Run "+rest, map[string]any{"command": rest}
		if verb == "sneak" {
			kind, title, input["path"] = acp.ToolKindRead, "Read notes.txt", "notes.txt"
		}
		a.say(ctx, sid, acp.StartToolCall("t2", title, acp.WithStartKind(kind)))
		res, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: sid,
			ToolCall: acp.ToolCallUpdate{ToolCallId: "t2", Kind: &kind, Title: &title, RawInput: input},
			Options: []acp.PermissionOption{
				{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "yes"},
				{Kind: acp.PermissionOptionKindAllowAlways, Name: "Always", OptionId: "always"},
				{Kind: acp.PermissionOptionKindRejectOnce, Name: "No", OptionId: "no"},
			}})
		switch {
		case err != nil:
			a.say(ctx, sid, acp.UpdateAgentMessageText("permission error "+err.Error()))
		case res.Outcome.Selected != nil:
			a.say(ctx, sid, acp.UpdateAgentMessageText("picked "+string(res.Outcome.Selected.OptionId)))
		default:
			a.say(ctx, sid, acp.UpdateAgentMessageText("cancelled"))
		}
	case "write":
		path, content, _ := strings.Cut(rest, " ")
		_, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content})
		if err != nil {
			a.say(ctx, sid, acp.UpdateAgentMessageText("write refused: "+err.Error()))
		} else {
			a.say(ctx, sid, acp.UpdateAgentMessageText("wrote "+path))
		}
	case "read":
		r, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: rest})
		if err != nil {
			a.say(ctx, sid, acp.UpdateAgentMessageText("read refused: "+err.Error()))
		} else {
			a.say(ctx, sid, acp.UpdateAgentMessageText("read "+r.Content))
		}
	case "getenv":
		a.say(ctx, sid, acp.UpdateAgentMessageText(rest+"="+os.Getenv(rest)+"\n"))
	case "pwd":
		wd, _ := os.Getwd()
		a.say(ctx, sid, acp.UpdateAgentMessageText(wd+"\n"))
	case "hang":
		a.say(ctx, sid, acp.StartToolCall("t3", "waiting", acp.WithStartKind(acp.ToolKindThink)))
		<-ctx.Done()
		return acp.StopReasonCancelled, nil
	case "deaf":
		// A child too, and both pids in $HOME/pids: the test checks that
		// the whole tree is gone.
		child := exec.Command("sleep", "1000")
		if err := child.Start(); err != nil {
			return "", err
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
		if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), "pids"), []byte(pids), 0o600); err != nil {
			return "", err
		}
		a.say(ctx, sid, acp.StartToolCall("t4", "waiting", acp.WithStartKind(acp.ToolKindThink)))
		select {}
	case "garbage":
		fmt.Fprintln(os.Stdout, "this is not json")
		select {}
	case "huge":
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","method":"x","params":"`+strings.Repeat("a", 5<<20)+`"}`)
		select {}
	}
	return "", nil
}

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, nil
}

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

func main() {
	a := &agent{noLoad: len(os.Args) > 1 && os.Args[1] == "--no-load", cancel: map[acp.SessionId]context.CancelFunc{}}
	a.conn = acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	<-a.conn.Done()
}
