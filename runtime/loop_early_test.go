package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/tools"
	"github.com/agnx-lite/agnx-lite/storage"
)

// readThenAnswer is an in-process model: it asks to read notes.txt, then
// answers with what the tool said.
type readThenAnswer struct{}

func (readThenAnswer) Stream(_ context.Context, req *runtime.Request, _ func(runtime.Delta)) (*runtime.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == runtime.RoleTool {
		return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant, Content: "it says " + last.Content}}, nil
	}
	return &runtime.Response{Message: runtime.Message{Role: runtime.RoleAssistant,
		ToolCalls: []runtime.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}}}, nil
}

// earlyRig is a loop whose agent asks before every tool call, started and
// restarted on one store inside a synctest bubble.
type earlyRig struct {
	t      *testing.T
	db     string
	agent  *runtime.LoadedAgent
	loop   *runtime.Loop
	store  *storage.Store
	cancel context.CancelFunc
	exited chan error
}

func newEarlyRig(t *testing.T) *earlyRig {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk"), 0o644))
	spec := &agents.Agent{Name: "assistant", Workspace: dir,
		Session: agents.Session{OnDisconnect: agents.OnDisconnectPause, Context: agents.Context{MaxHistoryTokens: 2000}}}
	return &earlyRig{t: t, db: filepath.Join(dir, "agnx.db"), agent: &runtime.LoadedAgent{Spec: spec,
		Provider: readThenAnswer{}, Tools: []runtime.Tool{&tools.ReadFile{Workspace: dir}}, Policy: &agents.Policy{Mode: "ask"}}}
}

func (r *earlyRig) start(loader runtime.AgentLoader) {
	st, err := storage.Open(r.db, &storage.Options{NoSync: true})
	require.NoError(r.t, err)
	r.store, r.loop = st, runtime.New(runtime.Options{Store: st, Agents: loader})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.exited = cancel, make(chan error, 1)
	go func() { r.exited <- r.loop.Run(ctx) }()
}

func (r *earlyRig) stop() {
	r.cancel()
	require.NoError(r.t, <-r.exited)
	require.NoError(r.t, r.store.Close())
}

// asked starts a turn that waits for an approval, then stops the loop.
func (r *earlyRig) asked() (sid, callID string) {
	r.start(newGatedLoader(map[string]*runtime.LoadedAgent{"assistant": r.agent}))
	ctx := context.Background()
	info, err := r.loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant"})
	require.NoError(r.t, err)
	sub, err := r.loop.Subscribe(ctx, info.ID)
	require.NoError(r.t, err)
	_, err = r.loop.Send(ctx, info.ID, runtime.Input{Content: "what do my notes say?"})
	require.NoError(r.t, err)
	ask := waitFor(r.t, sub, runtime.EvApprovalRequired)
	sub.Close()
	r.stop()
	return info.ID, ask.CallID
}

// An approval answered right after a restart, while its turn still waits
// for its agent's build, is kept and taken up once the turn runs: it is
// not refused as "not pending".
func TestApproval_AnsweredWhileTheAgentBuilds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newEarlyRig(t)
		sid, callID := r.asked()

		gated := newGatedLoader(map[string]*runtime.LoadedAgent{"assistant": r.agent})
		release := gated.hold()
		r.start(gated)
		defer r.stop()
		defer release()
		require.Equal(t, "assistant", <-gated.started, "the resumed turn waits for its agent")
		ctx := context.Background()
		sub, err := r.loop.Subscribe(ctx, sid)
		require.NoError(t, err)
		defer sub.Close()

		approved := make(chan error, 1)
		go func() { approved <- r.loop.Approve(ctx, sid, callID, runtime.AllowOnce) }()
		synctest.Wait() // the answer is in the loop; the build still blocks
		select {
		case err := <-approved:
			t.Fatalf("answered before the turn could take it up: %v", err)
		default:
		}
		release()
		require.NoError(t, <-approved)
		evs := collect(ctx, t, sub)
		assert.Equal(t, "buy milk", find(evs, runtime.EvToolResult)[0].Content)
		assert.Equal(t, "it says buy milk", find(evs, runtime.EvAssistant)[0].Content)
		assert.Equal(t, runtime.TurnCompleted, evs[len(evs)-1].Reason)
	})
}

// An early answer to a turn that ends instead (its agent cannot be built)
// is refused with ErrNoApproval, not left waiting.
func TestApproval_EarlyAnswerToATurnThatFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newEarlyRig(t)
		sid, callID := r.asked()

		gated := newGatedLoader(map[string]*runtime.LoadedAgent{"assistant": r.agent})
		gated.fails["assistant"] = errors.New("agent assistant: model.name is required")
		release := gated.hold()
		r.start(gated)
		defer r.stop()
		defer release()
		<-gated.started
		approved := make(chan error, 1)
		go func() { approved <- r.loop.Approve(context.Background(), sid, callID, runtime.AllowOnce) }()
		synctest.Wait()
		release()
		assert.ErrorIs(t, <-approved, runtime.ErrNoApproval)
	})
}
