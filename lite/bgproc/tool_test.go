package bgproc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// spawn, capture, log, write, kill, in each sandbox.
func TestTool_SpawnCaptureLogKill(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode, Options{})
			handle := h.spawn(t, `{"action":"spawn","interactive":true,"label":"demo",`+
				`"command":"read x; seq 1 5; echo \"err $x\" >&2; echo ready; exec sleep 60"}`)
			res := h.run(t, `{"action":"watch","handle":"`+handle+`","pattern":"^ready$"}`)
			require.False(t, res.IsError, res.Content)
			res = h.run(t, `{"action":"write","handle":"`+handle+`","input":"go\\n"}`)
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, h.note(t), "matching \"^ready$\"")

			res = h.run(t, `{"action":"capture","handle":"`+handle+`"}`)
			assert.Equal(t, "1\n2\n3\n4\n5\nerr go\nready\n", res.Content, "stdout and stderr in order")
			res = h.run(t, `{"action":"log","handle":"`+handle+`","offset":1,"limit":2}`)
			assert.Equal(t, "2\n3", res.Content)
			res = h.run(t, `{"action":"list"}`)
			assert.Contains(t, res.Content, "- "+handle+" | read x;")
			assert.Contains(t, res.Content, "| running | demo [interactive]")
			v := h.status(t, handle)
			assert.Equal(t, Running, v.Status)
			assert.Empty(t, v.Workspace, "the host path stays out of the answer")

			res = h.run(t, `{"action":"kill","handle":"`+handle+`"}`)
			assert.Equal(t, "Killed process "+handle, res.Content)
			assert.Equal(t, handle, h.exit(t), "OnExit is told")
			assert.Contains(t, h.note(t), "was killed", "the watching session is told")
			v = h.status(t, handle)
			assert.Equal(t, Killed, v.Status)
			assert.Contains(t, v.LastOutput, "ready")
			res = h.run(t, `{"action":"write","handle":"`+handle+`","input":"more"}`)
			assert.True(t, res.IsError)
			assert.Equal(t, "process is not running", res.Content)
			_, err := os.Stat(filepath.Join(h.ws, ".agnx", "processes", handle+".log"))
			assert.NoError(t, err, "the log is in the workspace")
		})
	}
}

// wait returns the parent's answer with the exit code.
func TestTool_WaitExitCode(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode, Options{})
			res := h.run(t, `{"action":"spawn","wait":true,"command":"echo hi; exit 3"}`)
			assert.True(t, res.IsError)
			var w waitResult
			require.NoError(t, json.Unmarshal([]byte(res.Content), &w), res.Content)
			assert.GreaterOrEqual(t, w.DurationSeconds, int64(0))
			w.DurationSeconds = 0 // wall time: a second or more on a loaded box
			assert.Equal(t, waitResult{Status: "exited", ExitCode: 3, Output: "hi\n"}, w)
			assert.Equal(t, 0, len(h.notes), "a waited process sends no notice")
			require.NoError(t, os.MkdirAll(filepath.Join(h.ws, "sub"), 0o755))
			res = h.run(t, `{"action":"spawn","wait":true,"workdir":"sub","command":"pwd"}`)
			assert.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, `sub\n"`)
			res = h.run(t, `{"action":"spawn","workdir":"../x","command":"pwd"}`)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Content, "outside the workspace")
			res = h.run(t, `{"action":"spawn","workdir":"/workspace/nope","command":"pwd"}`)
			assert.Equal(t, `Failed to spawn process: workdir "nope" is not a folder of the workspace: create it first, or leave workdir out`, res.Content)
		})
	}
}

// A process that ignores SIGTERM is killed after the grace; one that
// does not ends at once.
func TestTool_KillGrace(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			const grace = 3 * time.Second
			h := newHarness(t, mode, Options{Grace: grace})
			stubborn := h.spawn(t, `{"action":"spawn","command":"trap '' TERM; echo ready; exec sleep 60"}`)
			polite := h.spawn(t, `{"action":"spawn","command":"echo ready; exec sleep 60"}`)
			h.watchReady(t, stubborn)
			h.watchReady(t, polite)

			start := time.Now()
			h.run(t, `{"action":"kill","handle":"`+polite+`"}`)
			assert.Less(t, time.Since(start), grace, "SIGTERM reached the command")
			assert.Equal(t, Killed, h.status(t, polite).Status)
			code := 128 + 15
			assert.Equal(t, &code, h.status(t, polite).ExitCode)

			start = time.Now()
			h.run(t, `{"action":"kill","handle":"`+stubborn+`"}`)
			assert.GreaterOrEqual(t, time.Since(start), grace, "it ignored SIGTERM: killed after the grace")
			assert.Equal(t, Killed, h.status(t, stubborn).Status)
		})
	}
}

// watchReady waits until the process printed "ready" (it may have
// already).
func (h *harness) watchReady(t *testing.T, handle string) {
	t.Helper()
	res := h.run(t, `{"action":"capture","handle":"`+handle+`"}`)
	if strings.Contains(res.Content, "ready") {
		return
	}
	h.run(t, `{"action":"watch","handle":"`+handle+`","pattern":"ready"}`)
	if res = h.run(t, `{"action":"capture","handle":"`+handle+`"}`); strings.Contains(res.Content, "ready") {
		h.run(t, `{"action":"unwatch","handle":"`+handle+`"}`)
		return // it came between the capture and the watch
	}
	assert.Contains(t, h.note(t), "ready")
}

// timeout_seconds ends a process as timed_out, killing it whole (a
// child that ignores SIGTERM included). The timeout is fired by the test
// once the process has printed, so a slow start (a loaded box, qemu)
// cannot make it fire first.
func TestTool_Timeout(t *testing.T) {
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode, Options{Grace: 500 * time.Millisecond})
			type timeout struct {
				handle string
				end    func()
			}
			armed := make(chan timeout, 1)
			h.m.timeouts = func(handle string, end func()) { armed <- timeout{handle, end} }
			done := make(chan runtime.Result, 1)
			go func() {
				res, _ := h.tool.Run(callCtx(), []byte(`{"action":"spawn","wait":true,"timeout_seconds":1,`+
					`"command":"echo ready; sleep 60 & trap '' TERM; wait"}`))
				done <- res
			}()
			to := <-armed
			h.watchReady(t, to.handle)
			to.end()
			res := <-done
			var w waitResult
			require.NoError(t, json.Unmarshal([]byte(res.Content), &w), res.Content)
			assert.Equal(t, "timed_out", w.Status)
			assert.Equal(t, "ready\n", w.Output)
			assert.True(t, res.IsError)
		})
	}
}

// After a restart, a handle that was running reports lost, with its last
// output.
func TestManager_RestartLost(t *testing.T) {
	mode := modes(t)[len(modes(t))-1]
	h := newHarness(t, mode, Options{})
	handle := h.spawn(t, `{"action":"spawn","command":"echo before-restart; exec sleep 60"}`)
	h.watchReadyText(t, handle, "before-restart")
	h.m.Close() // the daemon stops: its processes die with it
	select {
	case <-h.exits:
		t.Fatal("a shutdown is not an exit: the schedule linked to it stays")
	default:
	}

	m2 := New(Options{Store: h.st})
	defer m2.Close()
	h.tool = m2.Tool(h.sandbox(mode))
	v := h.status(t, handle)
	assert.Equal(t, Lost, v.Status)
	assert.Contains(t, v.LastOutput, "before-restart")
	rec, ok, err := getRecord(h.st, handle)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, Lost, rec.Status, "recorded as lost")
	assert.Contains(t, h.run(t, `{"action":"list"}`).Content, "| lost |")
	res := h.run(t, `{"action":"send_keys","handle":"`+handle+`","keys":"Enter"}`)
	assert.Equal(t, "process is not running", res.Content)
}

func (h *harness) watchReadyText(t *testing.T, handle, text string) {
	t.Helper()
	h.run(t, `{"action":"watch","handle":"`+handle+`","pattern":"`+text+`"}`)
	if strings.Contains(h.run(t, `{"action":"capture","handle":"`+handle+`"}`).Content, text) {
		return
	}
	assert.Contains(t, h.note(t), text)
}

// Nothing of the daemon's environment reaches a process.
func TestTool_EnvHasNoDaemonSecrets(t *testing.T) {
	t.Setenv("AGNX_TEST_PROVIDER_KEY", "sk-secret-value")
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, mode, Options{})
			res := h.run(t, `{"action":"spawn","wait":true,"command":"env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'"}`)
			assert.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, "PATH=")
			assert.NotContains(t, res.Content, "sk-secret-value")
		})
	}
}

// A watched pattern tells the session once, however often it is printed.
func TestTool_WatchPatternOnce(t *testing.T) {
	mode := modes(t)[len(modes(t))-1]
	h := newHarness(t, mode, Options{})
	handle := h.spawn(t, `{"action":"spawn","interactive":true,"command":"read x; for i in 1 2 3; do echo BUILD OK $i; done"}`)
	h.run(t, `{"action":"watch","handle":"`+handle+`","pattern":"BUILD (OK|FAILED)"}`)
	h.run(t, `{"action":"send_keys","handle":"`+handle+`","keys":"go","press_enter":true}`)
	assert.Contains(t, h.note(t), "BUILD OK 1")
	assert.Equal(t, handle, h.exit(t))
	end := h.note(t)
	assert.Contains(t, end, "exited with code 0")
	assert.Contains(t, end, "BUILD OK 3", "the end notice shows the last output")
	assert.Empty(t, h.notes, "the pattern told once")
}

// send_keys: text and Enter reach stdin, C-d closes it, C-c interrupts.
func TestTool_SendKeys(t *testing.T) {
	mode := modes(t)[len(modes(t))-1]
	h := newHarness(t, mode, Options{})
	cat := h.spawn(t, `{"action":"spawn","interactive":true,"command":"cat; echo eof-seen"}`)
	h.run(t, `{"action":"unwatch","handle":"`+cat+`"}`)
	res := h.run(t, `{"action":"send_keys","handle":"`+cat+`","keys":"abc Tab d C-d","press_enter":false}`)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, cat, h.exit(t))
	assert.Contains(t, h.status(t, cat).LastOutput, "abc\tdeof-seen")
	assert.Empty(t, h.notes, "unwatched: no notice")

	sleeper := h.spawn(t, `{"action":"spawn","interactive":true,"command":"echo ready; exec sleep 60"}`)
	h.watchReady(t, sleeper)
	h.run(t, `{"action":"send_keys","handle":"`+sleeper+`","keys":"C-c","press_enter":false}`)
	assert.Equal(t, sleeper, h.exit(t))
	v := h.status(t, sleeper)
	assert.Equal(t, Exited, v.Status)
	assert.Equal(t, 130, *v.ExitCode, "SIGINT ended it")

	plain := h.spawn(t, `{"action":"spawn","command":"exec sleep 60"}`)
	res = h.run(t, `{"action":"write","handle":"`+plain+`","input":"x"}`)
	assert.Contains(t, res.Content, "spawn it with interactive: true")
}

// At most PerAgent processes of one agent, Total in all.
func TestManager_Limits(t *testing.T) {
	mode := modes(t)[0]
	h := newHarness(t, mode, Options{PerAgent: 2, Total: 3})
	for range 2 {
		h.spawn(t, `{"action":"spawn","command":"exec sleep 60"}`)
	}
	res := h.run(t, `{"action":"spawn","command":"exec sleep 60"}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "Failed to spawn process: this agent has 2 background processes running, the most it may: kill one first", res.Content)
	other := h.m.Tool(Sandbox{Agent: "bob", Workspace: h.ws, Start: h.sandbox(mode).Start})
	_, err := other.Run(callCtx(), []byte(`{"action":"spawn","command":"exec sleep 60"}`))
	require.NoError(t, err)
	res, err = other.Run(callCtx(), []byte(`{"action":"spawn","command":"exec sleep 60"}`))
	require.NoError(t, err)
	assert.Contains(t, res.Content, "3 background processes are running on this daemon")
	// bob's handles are not ada's.
	assert.Equal(t, 2, strings.Count(h.run(t, `{"action":"list"}`).Content, "\n"))
}

// Other sessions do not see or touch a session's processes.
func TestTool_OtherSession(t *testing.T) {
	h := newHarness(t, modes(t)[0], Options{})
	handle := h.spawn(t, `{"action":"spawn","command":"exec sleep 60"}`)
	ctx := callCtxSession("s2")
	res, err := h.tool.Run(ctx, []byte(`{"action":"kill","handle":"`+handle+`"}`))
	require.NoError(t, err)
	assert.Equal(t, "process belongs to a different session", res.Content)
	res, _ = h.tool.Run(ctx, []byte(`{"action":"status","handle":"proc_nope"}`))
	assert.Equal(t, "process not found: proc_nope", res.Content)
	res, _ = h.tool.Run(ctx, []byte(`{"action":"log","handle":"`+strings.Repeat("x", 100)+`"}`))
	assert.Equal(t, "process not found: "+strings.Repeat("x", 40)+"…", res.Content)
	res, _ = h.tool.Run(ctx, []byte(`{"action":"list"}`))
	assert.Equal(t, "No background processes for this session.", res.Content)
	res, _ = h.tool.Run(ctx, []byte(`{"action":"dance"}`))
	assert.Equal(t, "Unknown action: 'dance'. Use: "+actions, res.Content)
}

// spawn is matched by policies as the bash command it runs.
func TestTool_CallInvocation(t *testing.T) {
	tool := New(Options{}).Tool(Sandbox{Agent: "ada"})
	kind, inv, ok := tool.CallInvocation([]byte(`{"action":"spawn","command":"rm -rf /"}`))
	assert.Equal(t, []any{"bash", "rm -rf /", true}, []any{kind, inv, ok})
	_, _, ok = tool.CallInvocation([]byte(`{"action":"kill","handle":"h"}`))
	assert.False(t, ok, "the other actions are builtin background_process:<action>")
	assert.Equal(t, "rm -rf /", tool.Subject([]byte(`{"action":"spawn","command":"rm -rf /"}`)))
	assert.Equal(t, 1800*time.Second+DefaultGrace+time.Minute,
		tool.Deadline([]byte(`{"action":"spawn","wait":true,"command":"x"}`)))
}
