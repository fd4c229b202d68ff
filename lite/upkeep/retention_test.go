package upkeep

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
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

// testSpecs are the agents' specs as their files would say; an agent not
// listed is gone.
type testSpecs map[string]*agents.Agent

func (s testSpecs) Spec(name string) (*agents.Agent, error) {
	if a := s[name]; a != nil {
		return a, nil
	}
	return nil, fmt.Errorf("agent %s: %w", name, runtime.ErrAgentNotFound)
}

// noAgents builds no agent: the tests' sessions are created from their
// spec and run no turn.
type noAgents struct{}

func (noAgents) LoadAgent(name string) (*runtime.LoadedAgent, error) {
	return nil, fmt.Errorf("agent %s: %w", name, runtime.ErrAgentNotFound)
}

// sweepLoop is a running loop over a fresh store, stopped when the test
// ends.
func sweepLoop(t *testing.T) (*storage.Store, *runtime.Loop) {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	loop := runtime.New(runtime.Options{Store: st, Agents: noAgents{}})
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- loop.Run(ctx) }()
	<-loop.Ready()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-ran)
		require.NoError(t, st.Close())
	})
	return st, loop
}

// createSession creates a session of agent, whose spec is specs' or, for
// an agent gone since, just its name.
func createSession(t *testing.T, loop *runtime.Loop, specs testSpecs, agent string) string {
	t.Helper()
	spec := specs[agent]
	if spec == nil {
		spec = &agents.Agent{Name: agent}
	}
	info, err := loop.CreateSession(context.Background(), runtime.NewSession{Agent: agent, Gateway: "test", Spec: spec})
	require.NoError(t, err)
	return info.ID
}

func status(t *testing.T, loop *runtime.Loop, sid string) runtime.SessionStatus {
	t.Helper()
	info, err := loop.Session(context.Background(), sid)
	require.NoError(t, err)
	return info.Status
}

// ttlSpecs are agents forever (ttl_hours: 0) and brief (ttl_hours: 1,
// then extra) beside assistant, which follows agnx.yaml.
func ttlSpecs(extra agents.Session) testSpecs {
	never, hour := 0, 1
	brief := extra
	brief.TTLHours = &hour
	return testSpecs{
		"assistant": {Name: "assistant"},
		"forever":   {Name: "forever", Session: agents.Session{TTLHours: &never}},
		"brief":     {Name: "brief", Session: brief},
	}
}

// TestRetention_TTL moves the sweep's clock: a session idle past its ttl
// ends (timeout), one of an agent with ttl_hours 0 never does, an agent's
// own ttl wins over agnx.yaml's, and an agent gone gets agnx.yaml's.
func TestRetention_TTL(t *testing.T) {
	st, loop := sweepLoop(t)
	ctx := context.Background()
	specs := ttlSpecs(agents.Session{})
	plain, forever, brief, gone := createSession(t, loop, specs, "assistant"), createSession(t, loop, specs, "forever"),
		createSession(t, loop, specs, "brief"), createSession(t, loop, specs, "gone")

	var logs bytes.Buffer
	r := NewRetention(RetentionOptions{Store: st, Loop: loop, Specs: specs, Sessions: config.Sessions{TTLHours: 24},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	now := time.Now()
	r.Sweep(ctx, now.Add(2*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, loop, brief), "the agent's 1 h wins")
	assert.Equal(t, runtime.SessionActive, status(t, loop, plain), "agnx.yaml's day has not passed")
	assert.Contains(t, logs.String(), "session expired")
	assert.Contains(t, logs.String(), brief)

	r.Sweep(ctx, now.Add(48*time.Hour))
	assert.Equal(t, runtime.SessionCompleted, status(t, loop, plain))
	assert.Equal(t, runtime.SessionCompleted, status(t, loop, gone), "an agent gone gets agnx.yaml's day")
	assert.Equal(t, runtime.SessionActive, status(t, loop, forever), "ttl_hours 0 is never")
	r.Sweep(ctx, now.Add(10_000*time.Hour))
	assert.Equal(t, runtime.SessionActive, status(t, loop, forever))
	assert.Equal(t, Totals{Expired: 3}, r.Totals())

	var ends []runtime.Event
	require.NoError(t, loop.Events(ctx, plain, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvSessionEnd {
			ends = append(ends, e)
		}
		return nil
	}))
	require.Len(t, ends, 1)
	assert.Equal(t, runtime.EndTimeout, ends[0].Reason)
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
	st, loop := sweepLoop(t)
	ctx := context.Background()
	specs := ttlSpecs(agents.Session{Compaction: runtime.CompactionDiscard})
	var ids []string
	for _, agent := range []string{"assistant", "brief"} {
		id := createSession(t, loop, specs, agent)
		require.NoError(t, loop.EndSession(ctx, id, runtime.EndCompleted)) // writes a checkpoint at 2
		windowAt(t, st, id, 3)
		ids = append(ids, id)
	}
	r := NewRetention(RetentionOptions{Store: st, Loop: loop, Specs: specs, Sessions: config.Sessions{TTLHours: 24}})
	r.Sweep(ctx, time.Now())
	assert.Equal(t, Totals{Pruned: 4, Archived: 2}, r.Totals())
	assert.FileExists(t, filepath.Join(runtime.ArchiveDir(st), ids[0]+".jsonl.gz"))
	assert.NoFileExists(t, filepath.Join(runtime.ArchiveDir(st), ids[1]+".jsonl.gz"))
	var types []runtime.EventType
	require.NoError(t, loop.Events(ctx, ids[0], 0, func(e runtime.Event) error { types = append(types, e.Type); return nil }))
	assert.Equal(t, []runtime.EventType{runtime.EvSessionStart, runtime.EvSessionEnd}, types, "archived, still read")
	require.NoError(t, loop.Events(ctx, ids[1], 0, func(e runtime.Event) error { t.Errorf("discarded: %v", e); return nil }))

	size, files, err := runtime.ArchiveSize(st)
	require.NoError(t, err)
	assert.Equal(t, 1, files)
	assert.Positive(t, size)
	require.NoError(t, loop.DeleteSession(ctx, ids[0]))
	assert.NoFileExists(t, filepath.Join(runtime.ArchiveDir(st), ids[0]+".jsonl.gz"))
}

// TestRetention_Timer: the timer's first sweep runs after its delay, and
// Stop stops it and waits.
func TestRetention_Timer(t *testing.T) {
	st, loop := sweepLoop(t)
	ctx := context.Background()
	r := NewRetention(RetentionOptions{Store: st, Loop: loop, Specs: testSpecs{}})
	swept := make(chan struct{})
	r.first = time.Millisecond
	var once sync.Once
	r.now = func() time.Time { once.Do(func() { close(swept) }); return time.Now() }
	require.NoError(t, r.Start(ctx))
	select {
	case <-swept:
	case <-time.After(10 * time.Second):
		t.Fatal("no sweep")
	}
	require.NoError(t, r.Stop(ctx))
	require.NoError(t, r.Stop(ctx)) // twice is fine
}

// stuckExpirer holds each call until released, whatever its ctx says.
type stuckExpirer struct{ called, release chan struct{} }

func (e stuckExpirer) ExpireSession(context.Context, string, time.Time) (bool, error) {
	e.called <- struct{}{}
	<-e.release
	return false, nil
}

// Stop waits for a sweep under way at most until its ctx ends, and once
// the sweep is over it returns at once.
func TestRetention_StopDeadline(t *testing.T) {
	st, loop := sweepLoop(t)
	specs := testSpecs{"assistant": {Name: "assistant"}}
	createSession(t, loop, specs, "assistant")
	stuck := stuckExpirer{called: make(chan struct{}, 1), release: make(chan struct{})}
	r := NewRetention(RetentionOptions{Store: st, Loop: stuck, Specs: specs, Sessions: config.Sessions{TTLHours: 1}})
	r.first = time.Millisecond
	r.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	require.NoError(t, r.Start(context.Background()))
	<-stuck.called

	expired, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, r.Stop(expired), context.Canceled, "the sweep is still under way")
	close(stuck.release)
	assert.NoError(t, r.Stop(context.Background()))
}
