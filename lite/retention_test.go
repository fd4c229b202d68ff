package lite

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/storage"
)

// retentionApp is an app whose config ends sessions idle a day, with
// agents forever (ttl_hours: 0) and brief (ttl_hours: 1) beside the
// default assistant.
func retentionApp(t *testing.T, compaction string) *App {
	t.Helper()
	cfg := crashConfig(t.TempDir())
	cfg.Runtime.MemoryLimitMB = 0
	_, err := config.Init(cfg)
	require.NoError(t, err)
	cfg.Sessions.TTLHours = 24
	tmpl, err := os.ReadFile(filepath.Join(cfg.AgentsDir, "assistant", "agent.yaml"))
	require.NoError(t, err)
	for name, extra := range map[string]string{"forever": "    ttl_hours: 0\n", "brief": "    ttl_hours: 1\n" + compaction} {
		y := strings.Replace(string(tmpl), "name: assistant", "name: "+name, 1)
		y = strings.Replace(y, "  session:\n", "  session:\n"+extra, 1)
		dir := filepath.Join(cfg.AgentsDir, name)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(y), 0o600))
		for _, f := range []string{"SOUL.md", "INSTRUCTIONS.md"} {
			data, err := os.ReadFile(filepath.Join(cfg.AgentsDir, "assistant", f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o600))
		}
	}
	app, err := Open(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { app.Close() })
	return app
}

func status(t *testing.T, app *App, sid string) runtime.SessionStatus {
	t.Helper()
	info, err := app.Loop.Session(context.Background(), sid)
	require.NoError(t, err)
	return info.Status
}

// TestRetention_TTL moves the sweep's clock: a session idle past its ttl
// ends (timeout), one of an agent with ttl_hours 0 never does, and an
// agent's own ttl wins over agnx.yaml's.
func TestRetention_TTL(t *testing.T) {
	app := retentionApp(t, "")
	ctx := context.Background()
	create := func(agent string) string {
		info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: "test"})
		require.NoError(t, err)
		return info.ID
	}
	plain, forever, brief := create("assistant"), create("forever"), create("brief")
	in := agents.Inbound{Gateway: "telegram", ChatType: "private", ChatID: "7", SenderID: "7"}
	chat, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)

	var logs bytes.Buffer
	r := app.retain
	r.log = slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Now()
	r.sweep(ctx, now.Add(2*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, brief), "the agent's 1 h wins")
	assert.Equal(t, runtime.SessionActive, status(t, app, plain), "agnx.yaml's day has not passed")
	assert.Contains(t, logs.String(), "session expired")
	assert.Contains(t, logs.String(), brief)

	r.sweep(ctx, now.Add(48*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, plain))
	assert.Equal(t, runtime.SessionCompleted, status(t, app, chat))
	assert.Equal(t, runtime.SessionActive, status(t, app, forever), "ttl_hours 0 is never")
	r.sweep(ctx, now.Add(10_000*time.Hour))
	assert.Equal(t, runtime.SessionActive, status(t, app, forever))
	assert.Equal(t, int64(3), r.expired.Load())

	var ends []runtime.Event
	require.NoError(t, app.Loop.Events(ctx, plain, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvSessionEnd {
			ends = append(ends, e)
		}
		return nil
	}))
	require.Len(t, ends, 1)
	assert.Equal(t, runtime.EndTimeout, ends[0].Reason)

	// The chat's next message starts a fresh session, as /reset does.
	fresh, _, err := app.Chats().Session(ctx, in)
	require.NoError(t, err)
	assert.NotEqual(t, chat, fresh)
	ad, err := app.Chats().Admit(ctx, in, true)
	require.NoError(t, err)
	assert.Equal(t, fresh, ad.Session)
	live, _, err := app.Chats().Live(ctx, "telegram", "7")
	require.NoError(t, err)
	assert.Equal(t, fresh, live)

	var metrics bytes.Buffer
	app.WriteMetrics(&metrics)
	assert.Contains(t, metrics.String(), "agnx_sessions_expired_total 3\n")
}

// windowAt rewrites the session's latest checkpoint with window_seq set,
// as the checkpoints of history windows carry it.
func windowAt(t *testing.T, st *storage.Store, sid string, window uint64) {
	t.Helper()
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		seq, cp, err := tx.LatestCheckpoint(sid)
		if err != nil {
			return err
		}
		require.NotNil(t, cp)
		cp = append([]byte(`{"window_seq":`+strconv.FormatUint(window, 10)+`,`), cp[1:]...)
		return tx.PutCheckpoint(sid, seq, cp)
	}))
}

// TestRetention_Compaction: the default archives, an agent's discard
// discards, and a session's whole log still reads back after archiving.
func TestRetention_Compaction(t *testing.T) {
	app := retentionApp(t, "    compaction: discard\n")
	ctx := context.Background()
	var ids []string
	for _, agent := range []string{"assistant", "brief"} {
		info, err := app.Loop.CreateSession(ctx, runtime.NewSession{Agent: agent, Gateway: "test"})
		require.NoError(t, err)
		require.NoError(t, app.Loop.EndSession(ctx, info.ID, runtime.EndCompleted)) // writes a checkpoint at 2
		windowAt(t, app.Store, info.ID, 3)
		ids = append(ids, info.ID)
	}
	r := newRetention(app, app.Agents, slog.New(slog.DiscardHandler))
	r.sweep(ctx, time.Now())
	assert.Equal(t, int64(4), r.pruned.Load())
	assert.Equal(t, int64(2), r.archived.Load())
	assert.FileExists(t, filepath.Join(runtime.ArchiveDir(app.Store), ids[0]+".jsonl.gz"))
	assert.NoFileExists(t, filepath.Join(runtime.ArchiveDir(app.Store), ids[1]+".jsonl.gz"))
	var types []runtime.EventType
	require.NoError(t, app.Loop.Events(ctx, ids[0], 0, func(e runtime.Event) error { types = append(types, e.Type); return nil }))
	assert.Equal(t, []runtime.EventType{runtime.EvSessionStart, runtime.EvSessionEnd}, types, "archived, still read")
	require.NoError(t, app.Loop.Events(ctx, ids[1], 0, func(e runtime.Event) error { t.Errorf("discarded: %v", e); return nil }))

	size, files, err := runtime.ArchiveSize(app.Store)
	require.NoError(t, err)
	assert.Equal(t, 1, files)
	assert.Positive(t, size)
	require.NoError(t, app.Loop.DeleteSession(ctx, ids[0]))
	assert.NoFileExists(t, filepath.Join(runtime.ArchiveDir(app.Store), ids[0]+".jsonl.gz"))
}

// TestRetention_Timer: the timer's first sweep runs after its delay, and
// close stops it and waits.
func TestRetention_Timer(t *testing.T) {
	app := retentionApp(t, "")
	r := newRetention(app, app.Agents, slog.New(slog.DiscardHandler))
	swept := make(chan struct{})
	r.first = time.Millisecond
	var once sync.Once
	r.now = func() time.Time { once.Do(func() { close(swept) }); return time.Now() }
	r.start()
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("no sweep")
	}
	r.close()
	r.close() // twice is fine
}
