package lite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/httpapi"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// daemon is a Serve running in the test on 127.0.0.1 with a free port.
type daemon struct {
	url    string
	stop   context.CancelFunc
	served chan error
}

func serveConfig(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.AgentsDir = filepath.Join(dir, "agents")
	cfg.Server.Port = 0
	cfg.Server.KeepAliveIntervalSeconds = -1
	_, err := config.Init(cfg)
	require.NoError(t, err)
	return cfg
}

// testDrain is the drain bound of the tests' daemons: short, since a turn
// stalled in the fake model holds the drain to its end.
const testDrain = 300 * time.Millisecond

// startServe runs Serve and returns once Ready was called.
func startServe(t *testing.T, cfg *config.Config) *daemon {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	d := &daemon{stop: stop, served: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		d.served <- Serve(ctx, cfg, &ServeOptions{Options: Options{NoSync: true}, Version: "v-test",
			DrainTimeout: testDrain, Ready: func(u string) { ready <- u }})
	}()
	select {
	case d.url = <-ready:
	case err := <-d.served:
		t.Fatalf("Serve failed: %v", err)
	}
	t.Cleanup(func() {
		stop()
		select {
		case <-d.served:
		case <-time.After(drainTimeout + closeTimeout + 5*time.Second):
			t.Error("Serve did not return")
		}
	})
	return d
}

// shutdown cancels Serve's ctx and returns how long Serve took.
func (d *daemon) shutdown(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	d.stop()
	select {
	case err := <-d.served:
		require.NoError(t, err)
	case <-time.After(drainTimeout + closeTimeout + 5*time.Second):
		t.Fatal("Serve did not return within its bound")
	}
	d.served <- nil // for the cleanup
	return time.Since(start)
}

func (d *daemon) call(t *testing.T, method, path, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, path, data)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
}

func (d *daemon) session(t *testing.T, agent string) string {
	t.Helper()
	var s struct {
		ID string `json:"session_id"`
	}
	d.call(t, "POST", "/api/v1/sessions", `{"agent":"`+agent+`"}`, http.StatusCreated, &s)
	return s.ID
}

func TestServe_ReadyDaemonFileAndAdminShutdown(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	d := startServe(t, cfg)
	assert.True(t, strings.HasPrefix(d.url, "http://127.0.0.1:"), d.url)

	dm := config.ReadDaemon(cfg)
	require.NotNil(t, dm, "serve.json is written while serving")
	assert.Equal(t, os.Getpid(), dm.PID)
	assert.Equal(t, d.url, dm.URL)

	var ready map[string]string
	d.call(t, "GET", "/readyz", "", http.StatusOK, &ready)
	assert.Equal(t, httpapi.WorkspaceHash(cfg.DataDir), ready["workspace_hash"], "readyz names the workspace served")
	var list struct{ Agents []map[string]string }
	d.call(t, "GET", "/api/v1/agents", "", http.StatusOK, &list)
	require.Len(t, list.Agents, 1)
	assert.Equal(t, "assistant", list.Agents[0]["name"])
	sid := d.session(t, "assistant")
	var ans struct{ Content string }
	d.call(t, "POST", "/api/v1/sessions/"+sid+"/messages", `{"content":"hi"}`, http.StatusOK, &ans)
	assert.Equal(t, "echo: hi", ans.Content)
	d.call(t, "POST", "/api/admin/v1/reload-agents", "", http.StatusOK, nil)

	d.call(t, "POST", "/api/admin/v1/shutdown", "", http.StatusOK, nil)
	select {
	case err := <-d.served:
		require.NoError(t, err)
		d.served <- nil
	case <-time.After(closeTimeout):
		t.Fatal("admin shutdown did not stop Serve")
	}
	assert.NoFileExists(t, cfg.DaemonFile(), "serve.json is removed after")
	assert.Nil(t, config.ReadDaemon(cfg))
}

func TestServe_SecondInstanceRefused(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	startServe(t, cfg)

	want := fmt.Sprintf("agnx-lite is already running (pid %d)", os.Getpid())
	second := *cfg
	start := time.Now()
	err := Serve(context.Background(), &second, &ServeOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	_, err = Open(&second, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.Less(t, time.Since(start), 2*time.Second, "the refusal is at once")
}

func TestServe_RefusesNonLoopbackWithoutToken(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "192.168.1.20", "::"} {
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		cfg.Server.Host = host
		err := Serve(context.Background(), cfg, &ServeOptions{})
		require.Error(t, err)
		assert.Equal(t, "refusing to serve on "+host+" without a token: set server.api_token (e.g. api_token: ${AGNX_API_TOKEN}, made with `openssl rand -hex 32`) or bind 127.0.0.1", err.Error())
		assert.NoFileExists(t, cfg.DBPath(), "nothing is opened")
	}
	for _, host := range []string{"127.0.0.1", "localhost", "::1", "127.0.0.2"} {
		cfg := config.Default()
		cfg.Server.Host = host
		assert.NoError(t, checkBind(cfg), host)
	}
	cfg := config.Default()
	cfg.Server.Host = "0.0.0.0"
	cfg.Server.APIToken = "5f0c2a9e41d7b3c8e6a1f4d2"
	assert.NoError(t, checkBind(cfg))
	cfg.Server.AdminToken = "x"
	assert.ErrorContains(t, checkBind(cfg), "server.admin_token is too short", "flags that move the host re-check the tokens")
	assert.ErrorIs(t, checkBind(cfg), ErrBadConfig)
}

// A reverse proxy or tunnel on the box reaches the daemon from 127.0.0.1
// for clients anywhere: a daemon that answers to a public name (or trusts
// proxies) refuses to start without an API token, as on 0.0.0.0, saying
// what to set.
func TestServe_RefusesPublicNameWithoutToken(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Server.AllowedHosts = []string{"localhost", "agnx.example.org"}
	err := Serve(context.Background(), cfg, &ServeOptions{})
	require.Error(t, err)
	assert.Equal(t, "refusing to answer to agnx.example.org (server.allowed_hosts) without a token, as clients anywhere reach that name: "+
		"set server.api_token (e.g. api_token: ${AGNX_API_TOKEN}, made with `openssl rand -hex 32`) or take it out of server.allowed_hosts", err.Error())
	assert.ErrorIs(t, err, ErrBadConfig)
	assert.NoFileExists(t, cfg.DBPath(), "nothing is opened")

	cfg.Server.AllowedHosts = nil
	cfg.Server.TrustedProxies = []string{"127.0.0.1"}
	assert.EqualError(t, checkBind(cfg), "refusing to serve behind server.trusted_proxies without a token, as clients anywhere reach a proxy: "+
		"set server.api_token (e.g. api_token: ${AGNX_API_TOKEN}, made with `openssl rand -hex 32`) or remove server.trusted_proxies")

	cfg.Server.TrustedProxies = nil
	cfg.Server.AllowedHosts = []string{"localhost", "127.0.0.1", "::1"}
	assert.NoError(t, checkBind(cfg), "loopback names reach nothing beyond the box")
	cfg.Server.AllowedHosts = []string{"agnx.example.org"}
	cfg.Server.APIToken = "5f0c2a9e41d7b3c8e6a1f4d2"
	assert.NoError(t, checkBind(cfg))
	cfg.Server.AdminToken = "aaaaaaaaaaaaaaaaaaaa"
	assert.ErrorContains(t, checkBind(cfg), "server.admin_token is too easy to guess")
}

// The web page's cookie is named for the daemon's data dir (browsers send
// a host's cookies to every port of it): the same across restarts,
// another for another daemon.
func TestServe_CookieNamePerInstance(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	signin := func(cfg *config.Config) string {
		d := startServe(t, cfg)
		req, err := http.NewRequest("POST", d.url+"/ui/signin", strings.NewReader(`{"token":"5f0c2a9e41d7b3c8e6a1f4d2"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		require.Len(t, resp.Cookies(), 1)
		d.shutdown(t)
		return resp.Cookies()[0].Name
	}
	cfg := serveConfig(t, t.TempDir())
	cfg.Server.APIToken = "5f0c2a9e41d7b3c8e6a1f4d2"
	first := signin(cfg)
	assert.Regexp(t, `^agnx_web_[0-9a-f]{16}$`, first)
	assert.Equal(t, first, signin(cfg), "the same after a restart")
	other := serveConfig(t, t.TempDir())
	other.Server.APIToken = cfg.Server.APIToken
	assert.NotEqual(t, first, signin(other), "another daemon's is another")
}

func TestServe_PortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cfg := serveConfig(t, t.TempDir())
	cfg.Server.Port = ln.Addr().(*net.TCPAddr).Port
	err = Serve(context.Background(), cfg, &ServeOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("cannot listen on 127.0.0.1:%d", cfg.Server.Port))
	assert.Contains(t, err.Error(), "(is another server on that port? set server.port or use -p)")
	app, err := Open(cfg, nil)
	require.NoError(t, err, "the failed Serve closed the database")
	require.NoError(t, app.Close())
	assert.NoFileExists(t, cfg.DaemonFile())
}

// addContinueAgent writes an agent whose on_disconnect is continue.
func addContinueAgent(t *testing.T, cfg *config.Config, name string) {
	t.Helper()
	dir, err := agents.WriteTemplate(cfg.AgentsDir, name)
	require.NoError(t, err)
	file := filepath.Join(dir, agents.FileName)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "on_disconnect: pause", "on_disconnect: continue", 1))
	require.NoError(t, os.WriteFile(file, data, 0o644))
}

// TestServe_GracefulShutdownMidTurn stops the daemon while two turns are
// stalled in the model: the turn of a pause agent is marked interrupted,
// the turn of a continue agent resumes at the next start and completes;
// both conversations go on, the model seeing the earlier messages.
func TestServe_GracefulShutdownMidTurn(t *testing.T) {
	var stall atomic.Bool
	stall.Store(true)
	echo := llmtest.Echo()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if stall.Load() {
			return llmtest.Reply{Text: "half an answer", Fault: llmtest.Stall, FaultAfter: 1}
		}
		return echo(r)
	})
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	addContinueAgent(t, cfg, "keeper")
	d := startServe(t, cfg)
	paused, kept := d.session(t, "assistant"), d.session(t, "keeper")

	streams := map[string]*bufio.Reader{}
	for _, sid := range []string{paused, kept} {
		resp, err := http.Post(d.url+"/api/v1/sessions/"+sid+"/stream", "application/json", strings.NewReader(`{"content":"first question"}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		streams[sid] = bufio.NewReader(resp.Body)
		readUntil(t, streams[sid], "event: token")
	}
	took := d.shutdown(t)
	assert.Less(t, took, testDrain+closeTimeout, "Serve returns within its bound")
	t.Logf("shutdown with two stalled turns took %v", took.Round(time.Millisecond))
	for _, r := range streams {
		_, err := io.Copy(io.Discard, r)
		assert.NoError(t, err, "the streams were ended cleanly")
	}

	st, err := storage.Open(cfg.DBPath(), nil)
	require.NoError(t, err)
	pausedLog, keptLog := readLog(t, st, paused), readLog(t, st, kept)
	require.NoError(t, st.Close())
	last := pausedLog[len(pausedLog)-1]
	assert.Equal(t, runtime.EvTurnEnd, last.Type)
	assert.Equal(t, runtime.TurnInterrupted, last.Reason, "the pause agent's turn is interrupted")
	assert.Equal(t, "half ", pausedLog[len(pausedLog)-2].Content, "what was streamed is kept")
	assert.Equal(t, runtime.EvUserMessage, keptLog[len(keptLog)-1].Type, "the continue agent's turn is still open")

	stall.Store(false)
	before := len(fake.Requests())
	d = startServe(t, cfg)
	var evs []string
	resp, err := http.Get(fmt.Sprintf("%s/api/v1/sessions/%s/events?after=%d&until=turn_end&events=all", d.url, kept, keptLog[len(keptLog)-1].Seq))
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			evs = append(evs, sc.Text())
		}
	}
	require.NotEmpty(t, evs)
	assert.Contains(t, evs[len(evs)-1], `"status":"completed"`, "the continue turn resumed and completed")
	assert.Contains(t, strings.Join(evs, "\n"), "echo: first question")

	var ans struct{ Content string }
	d.call(t, "POST", "/api/v1/sessions/"+paused+"/messages", `{"content":"second question"}`, http.StatusOK, &ans)
	assert.Equal(t, "echo: second question", ans.Content)
	reqs := fake.Requests()[before:]
	carried := reqs[len(reqs)-1].Messages
	var contents []string
	for _, m := range carried {
		contents = append(contents, m.Role+": "+m.Content)
	}
	assert.Subset(t, contents, []string{"user: first question", "assistant: half ", "user: second question"},
		"the next model request carries the earlier messages")
}

func readUntil(t *testing.T, r *bufio.Reader, line string) {
	t.Helper()
	for {
		s, err := r.ReadString('\n')
		require.NoError(t, err)
		if strings.TrimSpace(s) == line {
			return
		}
	}
}

func readLog(t *testing.T, st *storage.Store, sid string) []runtime.Event {
	t.Helper()
	var out []runtime.Event
	require.NoError(t, runtime.ReadEvents(st, sid, 0, func(e runtime.Event) error {
		out = append(out, e)
		return nil
	}))
	return out
}

// Idle keep-alive connections, on /livez which needs no token, cannot lock
// other clients out: past server.max_connections the idlest is closed to
// make room (lite/httpapi's tests cover the refusal when all are busy).
func TestServe_IdleConnectionsDoNotLockOut(t *testing.T) {
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	cfg := serveConfig(t, t.TempDir())
	cfg.Server.MaxConnections = 2
	cfg.Server.IdleTimeoutSeconds = 3600 // a lock-out would last the hour
	d := startServe(t, cfg)
	defer d.shutdown(t)
	host := strings.TrimPrefix(d.url, "http://")
	for range 2 {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "GET /livez HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		_, err = http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	// The server marks a connection idle just after it sends the response,
	// and forgets a closed one just after closing it: a client can be
	// quicker and be refused (503) until then, a moment, not the hour.
	for range 3 {
		require.Eventually(t, func() bool {
			resp, err := client.Get(d.url + "/livez")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 30*time.Second, 10*time.Millisecond, "an idle connection made room")
	}
}

// Under systemd (Type=notify, WatchdogSec) the daemon says READY=1 when it
// serves, pings the watchdog from its event loop, and says STOPPING=1.
func TestServe_NotifiesSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "60000") // 60 ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	fake := llmtest.NewHandler(t, llmtest.Ollama, llmtest.Echo())
	t.Setenv("OLLAMA_HOST", fake.BaseURL())
	d := startServe(t, serveConfig(t, t.TempDir()))

	read := func() string {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		buf := make([]byte, 512)
		n, err := conn.Read(buf)
		require.NoError(t, err)
		return string(buf[:n])
	}
	assert.Contains(t, read(), "READY=1")
	watchdogs := 0
	for watchdogs < 3 {
		if strings.Contains(read(), "WATCHDOG=1") {
			watchdogs++
		}
	}
	d.shutdown(t)
	for {
		if msg := read(); strings.Contains(msg, "STOPPING=1") {
			break
		}
	}
}
