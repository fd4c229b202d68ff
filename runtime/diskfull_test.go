package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/runtime/llm/ollama"
	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/agnx-lite/agnx-lite/storage/storagetest"
)

// fullDisk is a loop on a 1 MiB tmpfs whose model, asked about "hello",
// waits until the test has filled the disk, then answers at length.
type fullDisk struct {
	disk    string
	store   *storage.Store
	loop    *runtime.Loop
	asked   chan struct{}
	release chan struct{}
}

func newFullDisk(t *testing.T, reserve int64) *fullDisk {
	f := &fullDisk{disk: storagetest.TinyDisk(t, "1m"), asked: make(chan struct{}, 1), release: make(chan struct{})}
	echo := llmtest.Echo()
	fake := llmtest.NewHandler(t, llmtest.Ollama, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "hello" {
			f.asked <- struct{}{}
			<-f.release
			return llmtest.Reply{Text: strings.Repeat("long answer ", 10_000), Chunks: 1}
		}
		return echo(r)
	})
	var err error
	f.store, err = storage.Open(filepath.Join(f.disk, "agnx.db"), &storage.Options{ReserveBytes: reserve})
	require.NoError(t, err)
	spec := &agents.Agent{Name: "assistant", Model: agents.Model{Provider: "ollama", Name: "m"},
		Session: agents.Session{OnDisconnect: "pause"}}
	agent := &runtime.LoadedAgent{Spec: spec,
		Provider: ollama.New(ollama.Options{BaseURL: fake.BaseURL(), HTTP: llm.Options{MaxAttempts: 1}})}
	f.loop = runtime.New(runtime.Options{Store: f.store, Agents: loader{"assistant": agent}})
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() { exited <- f.loop.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-exited)
		assert.NoError(t, f.store.Close())
	})
	return f
}

// helloWithFullDisk sends "hello" and fills the disk while the model
// answers; it returns the session and a subscription made before.
func (f *fullDisk) helloWithFullDisk(t *testing.T, ctx context.Context) (string, *runtime.Subscription) {
	info, err := f.loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "test"})
	require.NoError(t, err)
	sub, err := f.loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	_, err = f.loop.Send(ctx, info.ID, runtime.Input{Content: "hello"})
	require.NoError(t, err, "the message is stored and acknowledged")
	<-f.asked
	storagetest.Fill(t, filepath.Join(f.disk, "workspace-file"))
	close(f.release)
	return info.ID, sub
}

// The disk fills while the model answers: its client gets the disk-full
// sentence, not "the runtime stopped"; the turn ends as failed and is not
// answered later, when the next message comes, behind the user's back.
func TestLoop_DiskFullMidTurn(t *testing.T) {
	f := newFullDisk(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sid, sub := f.helloWithFullDisk(t, ctx)
	var last runtime.Event
	for e := range sub.C() {
		last = e
	}
	require.ErrorIs(t, sub.Err(), storage.ErrDiskFull)
	assert.Equal(t, "disk full while writing "+f.store.Path()+": free some space; nothing acknowledged was lost", sub.Err().Error())
	assert.Equal(t, runtime.EvError, last.Type)
	assert.Equal(t, sub.Err().Error(), last.Content)
	sentence := sub.Err().Error()

	require.NoError(t, os.Remove(filepath.Join(f.disk, "workspace-file")))
	sub, err := f.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	_, err = f.loop.Send(ctx, sid, runtime.Input{Content: "next"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd && e.Reason == runtime.TurnCompleted {
			break
		}
	}
	var got []string
	require.NoError(t, runtime.ReadEvents(f.store, sid, 0, func(e runtime.Event) error {
		switch e.Type {
		case runtime.EvUserMessage, runtime.EvAssistant, runtime.EvError:
			got = append(got, string(e.Type)+": "+e.Content[:min(len(e.Content), 300)])
		case runtime.EvTurnEnd:
			got = append(got, "turn_end: "+e.Reason)
		}
		return nil
	}))
	assert.Equal(t, []string{
		"user_message: hello",
		"error: " + sentence,
		"turn_end: failed",
		"user_message: next",
		"assistant_response: echo: next",
		"turn_end: completed",
	}, got, "the failed turn is not answered late")
}

// With a reserve, the same answer is stored: the reserve's space lets the
// turn end normally, and ReserveGone tells tools that write to hold off.
func TestLoop_DiskFullReserveKeepsTheTurn(t *testing.T) {
	f := newFullDisk(t, 256<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, sub := f.helloWithFullDisk(t, ctx)
	var answer, end runtime.Event
	for e := range sub.C() {
		if e.Type == runtime.EvAssistant {
			answer = e
		}
		if e.Type == runtime.EvTurnEnd {
			end = e
			break
		}
	}
	assert.Equal(t, runtime.TurnCompleted, end.Reason)
	assert.True(t, strings.HasPrefix(answer.Content, "long answer"))
	assert.True(t, f.store.ReserveGone())
	sub.Close()
}

// A client told that its message's turn failed for a full disk may send
// the message again: the resend stores nothing (the message is stored
// already) and Send says so; only the message right after the failure is
// taken for a resend, so asking the same again later is a new message.
func TestLoop_DiskFullResendIsStoredOnce(t *testing.T) {
	f := newFullDisk(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sid, sub := f.helloWithFullDisk(t, ctx)
	for range sub.C() {
	}
	require.ErrorIs(t, sub.Err(), storage.ErrDiskFull)
	require.NoError(t, os.Remove(filepath.Join(f.disk, "workspace-file")))

	_, err := f.loop.Send(ctx, sid, runtime.Input{Content: "hello"})
	var lost *runtime.TurnLostError
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, uint64(2), lost.Seq, "the stored message, after session_start")
	assert.NotErrorIs(t, err, runtime.ErrDiskFull, "it is not a refusal to store: nothing is to be sent again")

	sub, err = f.loop.Subscribe(ctx, sid)
	require.NoError(t, err)
	_, err = f.loop.Send(ctx, sid, runtime.Input{Content: "hello"})
	require.NoError(t, err, "asked again after that, it is a new message")
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	var users []string
	require.NoError(t, runtime.ReadEvents(f.store, sid, 0, func(e runtime.Event) error {
		if e.Type == runtime.EvUserMessage {
			users = append(users, e.Content)
		}
		return nil
	}))
	assert.Equal(t, []string{"hello", "hello"}, users, "the resend was not stored; the later question was")
}
