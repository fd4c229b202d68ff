package lite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/ci/testenv"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// scriptPluginEnv makes the test binary a gateway plugin (see TestMain).
// Its run N (counted in $AGNX_SCRIPT_DIR/runs) says $AGNX_SCRIPT_SAY_<N>,
// as user u1 of chat c1, once ready; every send_message is appended to
// $AGNX_SCRIPT_DIR/out and acknowledged, and it exits 0 once out holds
// $AGNX_SCRIPT_EXIT_AFTER messages.
const scriptPluginEnv = "AGNX_LITE_TEST_PLUGIN"

func runScriptPlugin() int {
	dir := os.Getenv("AGNX_SCRIPT_DIR")
	enc := json.NewEncoder(os.Stdout)
	emit := func(v any) { _ = enc.Encode(v) }
	run := appendRecord(filepath.Join(dir, "runs"), "started")
	emit(map[string]any{"type": "ready", "gateway": "script", "version": "v1alpha1", "capabilities": []string{"reply"}})
	if say := os.Getenv("AGNX_SCRIPT_SAY_" + strconv.Itoa(run)); say != "" {
		emit(map[string]any{"type": "message_received", "message_id": fmt.Sprintf("m%d", run), "chat_id": "c1",
			"sender": map[string]any{"id": "u1"}, "content": map[string]any{"type": "text", "text": say},
			"routing": map[string]any{"channel": "script", "chat_type": "private", "chat_id": "c1", "sender_id": "u1"}})
	}
	exitAfter, _ := strconv.Atoi(os.Getenv("AGNX_SCRIPT_EXIT_AFTER"))
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var c struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Content   string `json:"content"`
		}
		if json.Unmarshal(sc.Bytes(), &c) != nil {
			continue
		}
		switch c.Type {
		case "ping":
			emit(map[string]any{"type": "pong", "request_id": c.RequestID, "uptime_seconds": 1, "connected": true})
		case "shutdown":
			return 0
		case "send_message":
			n := appendRecord(filepath.Join(dir, "out"), c.Content)
			emit(map[string]any{"type": "command_ok", "request_id": c.RequestID})
			if exitAfter > 0 && n >= exitAfter {
				return 0
			}
		}
	}
	return 0
}

// appendRecord appends s to the file as a JSON line and returns how many
// lines the file holds.
func appendRecord(path, s string) int {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return 0
	}
	line, _ := json.Marshal(s)
	fmt.Fprintf(f, "%s\n", line)
	f.Close()
	return len(readRecords(path))
}

func readRecords(path string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s string
		if json.Unmarshal([]byte(l), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// recv returns what c gives, failing the test after 20 s.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen within 20 s", what)
	}
	var zero T
	return zero
}

// One session, driven through HTTP, the loop API the CLI's in-process
// backend uses (cmd/agnx-lite is a main package, out of reach here) and
// a plugin that is killed in the middle of its turn and restarted by the
// supervisor: each turn's answer reaches the plugin exactly once, in
// order, including those that ended while it was down, and the HTTP
// follower sees every event of the session once.
func TestGateways_OneSessionThroughHTTPTheCLIAndARestartedPlugin(t *testing.T) {
	testenv.SkipIfNoReexec(t, "the plugin is the re-executed test binary")
	const slow = "slow, from the plugin"
	asked, gate := make(chan struct{}), make(chan struct{})
	var askedOnce, gateOnce sync.Once
	release := func() { gateOnce.Do(func() { close(gate) }) }
	echo := llmtest.Echo()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "user" && r.LastUser() == slow {
			askedOnce.Do(func() { close(asked) })
			<-gate
		}
		return echo(r)
	})
	t.Cleanup(release)
	t.Setenv("OLLAMA_HOST", fake.BaseURL())

	dir := t.TempDir()
	cfg := crashConfig(filepath.Join(dir, "data"))
	cfg.Runtime.MemoryLimitMB = 0 // no guard: the test binary's resident set (under -race) is no daemon's
	_, err := config.Init(cfg)
	require.NoError(t, err)
	pdir := filepath.Join(dir, "plugin")
	require.NoError(t, os.Mkdir(pdir, 0o700))
	cfg.Gateways.External = []config.ExternalGateway{{Name: "script", Command: os.Args[0], Restart: "on_failure",
		Env: map[string]config.Secret{scriptPluginEnv: "1", "AGNX_SCRIPT_DIR": config.Secret(pdir), "AGNX_SCRIPT_SAY_1": slow,
			"AGNX_SCRIPT_SAY_2": "back again, from the plugin", "AGNX_SCRIPT_EXIT_AFTER": "4"}}}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	defer app.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The chat's session, as the plugin's first message would start it.
	sid, _, err := app.Chats().Session(ctx, agents.Inbound{Gateway: "script", ChatType: "private", ChatID: "c1", SenderID: "u1"})
	require.NoError(t, err)

	// HTTP follows the session from its first event.
	api := httpapi.New(httpapi.Options{Loop: app.Loop, Agents: registry{app}, KeepAlive: -1})
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.Close()
	client := httpapi.NewClient(srv.URL, httpapi.ClientOptions{})
	seen := make(chan runtime.Event, 256)
	fctx, stopFollowing := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() {
		followed <- client.Events(fctx, sid, 0, false, func(e runtime.Event) error {
			if e.Durable() {
				seen <- e
			}
			return nil
		})
	}()
	var events []runtime.Event
	waitFor := func(what string, match func(runtime.Event) bool) {
		t.Helper()
		for {
			e := recv(t, seen, what)
			events = append(events, e)
			if match(e) {
				return
			}
		}
	}

	// The plugin, held in its restart backoff (the supervisor's own
	// goroutine waits in Observe) until the test lets it come back.
	started, stopped := make(chan plugin.Status, 8), make(chan struct{})
	inBackoff, resume := make(chan struct{}), make(chan struct{})
	var holdOnce, resumeOnce sync.Once
	letResume := func() { resumeOnce.Do(func() { close(resume) }) }
	t.Cleanup(letResume)
	gws, err := pluginGateways(app, nil, plugin.Timing{BackoffBase: 20 * time.Millisecond, BackoffMax: 160 * time.Millisecond},
		func(_ string, s plugin.Status) {
			switch s.State {
			case plugin.StateStarted:
				started <- s
			case plugin.StateBackoff:
				holdOnce.Do(func() {
					close(inBackoff)
					<-resume
				})
			case plugin.StateStopped:
				close(stopped)
			}
		})
	require.NoError(t, err)
	set, err := gatewaySet(gws).start(ctx, app.log)
	require.NoError(t, err)
	defer func() {
		letResume()
		sctx, scancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer scancel()
		set.stop(sctx, app.log)
	}()

	first := recv(t, started, "the plugin's start")
	recv(t, asked, "the plugin's message reaching the model")

	// HTTP: a message queued behind the plugin's turn; its own turn follows.
	httpDone := make(chan error, 1)
	go func() {
		r, err := client.Send(ctx, sid, "from http")
		if err == nil && r.Content != "echo: from http" {
			err = fmt.Errorf("HTTP got %q", r.Content)
		}
		httpDone <- err
	}()
	waitFor("HTTP's message in the log", func(e runtime.Event) bool {
		return e.Type == runtime.EvUserMessage && e.Content == "from http"
	})

	// The plugin dies in the middle of its turn; both turns end while it is down.
	require.NoError(t, syscall.Kill(first.PID, syscall.SIGKILL))
	recv(t, inBackoff, "the plugin's backoff")
	release()
	require.NoError(t, recv(t, httpDone, "HTTP's answer"))

	// The CLI, as its in-process backend does: follow, send, read to the turn's end.
	sub, err := app.Loop.Follow(ctx, sid, runtime.Live)
	require.NoError(t, err)
	_, err = app.Loop.Send(ctx, sid, runtime.Input{Content: "from the cli", SenderID: "cli-user"})
	require.NoError(t, err)
	var cliAnswer string
	for e := range sub.C() {
		if e.Type == runtime.EvAssistant {
			cliAnswer = e.Content
		}
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	sub.Close()
	assert.Equal(t, "echo: from the cli", cliAnswer)

	// Back up: the plugin gets the three answers it is owed, then says
	// something new, and exits once it has four answers.
	letResume()
	assert.Equal(t, 2, recv(t, started, "the plugin's restart").Run)
	recv(t, stopped, "the plugin's exit after four answers")
	assert.Equal(t, []string{"echo: " + slow, "echo: from http", "echo: from the cli", "echo: back again, from the plugin"},
		readRecords(filepath.Join(pdir, "out")), "each answer once, in order")

	// HTTP saw every event once, in order, up to the last: all the log
	// holds but session_start, which the event stream does not carry.
	info, err := app.Loop.Session(ctx, sid)
	require.NoError(t, err)
	waitFor("the last event over HTTP", func(e runtime.Event) bool { return e.Seq == info.LastSeq })
	stopFollowing()
	assert.ErrorIs(t, recv(t, followed, "the HTTP follower's end"), context.Canceled)
	var want, got []uint64
	require.NoError(t, app.Loop.Events(ctx, sid, 0, func(e runtime.Event) error {
		if e.Type != runtime.EvSessionStart {
			want = append(want, e.Seq)
		}
		return nil
	}))
	turns := 0
	for _, e := range events {
		got = append(got, e.Seq)
		if e.Type == runtime.EvTurnEnd {
			turns++
		}
	}
	assert.Equal(t, want, got)
	assert.Equal(t, 4, turns)
	assert.Equal(t, 4, info.Turns)
}
