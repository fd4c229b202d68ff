package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// acpPeers is where ci/mcp-peers.sh installs the reference SDKs (the
// module root's .peers, or $MCP_PEERS_DIR); the test skips, saying why,
// without node or the ACP SDK, and fails instead when CI=true.
func acpPeers(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed: the reference ACP client cannot run (install Node.js, then make deps)")
	}
	dir = os.Getenv("MCP_PEERS_DIR")
	if dir == "" {
		dir, err = filepath.Abs(filepath.Join("..", "..", ".peers"))
		require.NoError(t, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		missing("@agentclientprotocol/sdk is not installed in " + dir + ": run make deps (ci/mcp-peers.sh)")
	}
	return node, dir
}

// The reference SDK's client (@agentclientprotocol/sdk, driven by
// testdata/acp_client.mjs) talks to the built binary: initialize,
// session/new, a prompt with a tool call it is asked permission for, and
// an unknown method answered -32601.
func TestCLI_ACPReferenceClient(t *testing.T) {
	node, peers := acpPeers(t)
	testenv.SkipIfNoReexec(t, "it runs the built binary")
	c := newCLI(t)
	code, _, errs := c.run("init")
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.WriteFile(filepath.Join(c.dir, "agents", "assistant", "policy.yaml"), []byte("mode: ask\n"), 0o644))
	bin := buildBinary(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "acp_client.mjs"), peers, bin}, c.args([]string{"acp"})...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OLLAMA_HOST=" + c.fake.BaseURL(), "ACP_PROMPT=use list_dir {}"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var got struct {
		ProtocolVersion   int      `json:"protocolVersion"`
		LoadSession       bool     `json:"loadSession"`
		AgentName         string   `json:"agentName"`
		SessionID         string   `json:"sessionId"`
		StopReason        string   `json:"stopReason"`
		UnknownMethodCode int      `json:"unknownMethodCode"`
		Text              string   `json:"text"`
		Updates           []string `json:"updates"`
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	require.True(t, sc.Scan(), "no output; stderr: %s", stderr.String())
	require.NoError(t, json.Unmarshal(sc.Bytes(), &got), sc.Text())
	assert.Equal(t, 1, got.ProtocolVersion)
	assert.True(t, got.LoadSession)
	assert.Equal(t, "agnx-lite", got.AgentName)
	assert.True(t, strings.HasPrefix(got.SessionID, "session_"), got.SessionID)
	assert.Equal(t, "end_turn", got.StopReason)
	assert.Equal(t, -32601, got.UnknownMethodCode)
	assert.Equal(t, "list_dir said: . is empty", got.Text)
	assert.Equal(t, []string{
		"tool_call in_progress",
		"request_permission allow_once,allow_always,reject_once",
		"tool_call_update in_progress",
		"tool_call_update completed",
	}, got.Updates[:4], "%q", got.Updates)
	t.Logf("reference client: %s", sc.Text())
}

// buildBinary builds agnx-lite into the test's temporary folder.
func buildBinary(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "agnx-lite")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// startACPChild runs the binary's acp command as a child process, driven
// by the Go SDK's client over its stdin and stdout.
func startACPChild(t *testing.T, c *cli, bin string) (*exec.Cmd, *acp.ClientSideConnection, *acpText) {
	cmd := exec.Command(bin, c.args([]string{"acp"})...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OLLAMA_HOST=" + c.fake.BaseURL()}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := &acpText{}
	conn := acp.NewClientSideConnection(client, in, out)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	return cmd, conn, client
}

// A session an editor used survives the agent being killed: the next
// agnx-lite acp loads it, with what was said.
func TestCLI_ACPSessionSurvivesKill(t *testing.T) {
	testenv.SkipIfNoReexec(t, "it kills a child process")
	c := newCLI(t)
	code, _, errs := c.run("init")
	require.Equal(t, 0, code, errs)
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cmd, conn, client := startACPChild(t, c, bin)
	_, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	require.NoError(t, err)
	s, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "/", McpServers: []acp.McpServer{}})
	require.NoError(t, err)
	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("remember this")}})
	require.NoError(t, err)
	assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, "echo: remember this", client.take())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	_, conn, client = startACPChild(t, c, bin)
	_, err = conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	require.NoError(t, err)
	_, err = conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: s.SessionId, Cwd: "/", McpServers: []acp.McpServer{}})
	require.NoError(t, err)
	assert.Equal(t, "echo: remember this", client.take())
}
