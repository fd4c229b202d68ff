package bgproc

import (
	"bytes"
	"context"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/bwrap"
	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestParseKeys(t *testing.T) {
	steps, err := parseKeys("y Enter C-c Up c-a x C-d", true)
	require.NoError(t, err)
	assert.Equal(t, []keyStep{{bytes: "y\n"}, {signal: 2}, {bytes: "\x1b[A\x01x"}, {eof: true}, {bytes: "\n"}}, steps)
	_, err = parseKeys("C-z", false)
	assert.ErrorContains(t, err, "no job control")
	_, err = parseKeys("  ", false)
	assert.ErrorContains(t, err, "keys is empty")
}

func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"Down Enter", "C-c", "c-\\ C-d", "Escape :wq Enter", "C-", "C-zz", strings.Repeat("a ", 3000)} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, keys string, enter bool) {
		steps, err := parseKeys(keys, enter)
		if err != nil {
			return
		}
		require.NotEmpty(t, steps)
		for _, s := range steps {
			n := 0
			if s.bytes != "" {
				n++
			}
			if s.signal != 0 {
				n++
			}
			if s.eof {
				n++
			}
			require.Equal(t, 1, n, "one thing per step")
		}
	})
}

func FuzzWorkdirIn(f *testing.F) {
	for _, s := range []string{"sub", "./a/../b", "..", "../x", "/workspace/a", "/workspacex", "/etc", "a/../../b", "/workspace/../etc", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, wd string) {
		rel, err := workdirIn(wd, "/workspace")
		if err != nil {
			return
		}
		require.False(t, strings.HasPrefix(rel, "/"), rel)
		require.False(t, rel == ".." || strings.HasPrefix(rel, "../"), rel)
		require.NotContains(t, "/"+rel+"/", "/../")
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"handle":"proc_1","status":"running","exit_code":3,"spawned_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"handle":""}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err == nil {
			require.NotEmpty(t, r.Handle)
			_ = describe(r)
		}
	})
}

// Lines reach the pattern whole (up to maxScan), however the output is
// cut into chunks.
func FuzzLineScan(f *testing.F) {
	f.Add([]byte("ab\ncd\n"), uint8(1))
	f.Add([]byte("no newline"), uint8(3))
	f.Add(bytes.Repeat([]byte("x"), 3*maxScan), uint8(200))
	f.Fuzz(func(t *testing.T, out []byte, cut uint8) {
		var s lineScan
		var got []string
		step := int(cut) + 1
		for i := 0; i < len(out); i += step {
			s.lines(out[i:min(i+step, len(out))], func(l []byte) bool {
				got = append(got, string(l))
				return true
			})
		}
		var want []string
		lines := strings.Split(string(out), "\n")
		for _, l := range lines[:len(lines)-1] {
			want = append(want, l[:min(len(l), maxScan)])
		}
		require.Equal(t, want, got)
	})
}

// The model's arguments never panic the tool, whatever they are.
func FuzzToolArgs(f *testing.F) {
	f.Add([]byte(`{"action":"status","handle":"proc_x"}`))
	f.Add([]byte(`{"action":"log","handle":"proc_x","offset":-5,"limit":99999999}`))
	f.Add([]byte(`{"action":"spawn","command":"","workdir":"../.."}`))
	f.Add([]byte(`{"action":"spawn","command":"x","timeout_seconds":-1}`))
	f.Add([]byte(`{"action":7}`))
	f.Add([]byte(`not json`))
	dir := f.TempDir()
	st := openStoreF(f, dir+"/agnx.db")
	m := New(Options{Store: st})
	noSandbox := func(context.Context, string, []string) (*bwrap.Process, error) {
		return nil, errors.New("no sandbox in this test")
	}
	tool := m.Tool(Sandbox{Agent: "ada", Workspace: dir, Start: noSandbox})
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := tool.Run(runtime.WithCall(context.Background(), runtime.CallInfo{SessionID: "s1"}), raw)
		require.NoError(t, err)
		require.True(t, utf8.ValidString(res.Content))
		_ = tool.Subject(raw)
		_, _, _ = tool.CallInvocation(raw)
		_ = tool.Deadline(raw)
	})
}

// An idle manager holds no goroutine: each process's goroutine ends with
// it.
func TestManager_NoGoroutineWhenIdle(t *testing.T) {
	mode := modes(t)[len(modes(t))-1]
	h := newHarness(t, mode, Options{})
	before := goruntime.NumGoroutine()
	for range 3 {
		h.spawn(t, `{"action":"spawn","command":"echo hi"}`)
	}
	for range 3 {
		h.exit(t)
	}
	h.m.mu.Lock()
	assert.Nil(t, h.m.running, "nothing kept once idle")
	h.m.mu.Unlock()
	h.m.wg.Wait() // the copiers return right after OnExit
	// bwrap's reapers close Done as their last act: they may still be
	// returning (nothing signals their very end; assert.Eventually would
	// count its own goroutine).
	for deadline := time.Now().Add(5 * time.Second); goruntime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	assert.LessOrEqual(t, goruntime.NumGoroutine(), before, "no goroutine left behind")
}
