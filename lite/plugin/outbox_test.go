package plugin_test

import (
	"context"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/plugin"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// slowModel echoes, except that it answers the message slow only once
// released: the test decides when that turn ends. asked is closed when
// the model has the slow message.
type slowModel struct {
	slow        string
	asked, gate chan struct{}
	once, rel   sync.Once
}

func newSlowModel(t *testing.T, slow string) *slowModel {
	m := &slowModel{slow: slow, asked: make(chan struct{}), gate: make(chan struct{})}
	t.Cleanup(m.release) // before the fake server closes
	return m
}

func (m *slowModel) handler() llmtest.Handler {
	echo := llmtest.Echo()
	return func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.Last().Role == "user" && r.LastUser() == m.slow {
			m.once.Do(func() { close(m.asked) })
			<-m.gate
		}
		return echo(r)
	}
}

func (m *slowModel) release() { m.rel.Do(func() { close(m.gate) }) }

func (m *slowModel) waitAsked(t *testing.T) {
	t.Helper()
	select {
	case <-m.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the model was not asked within 10 s")
	}
}

// waitTurns waits until the session's log holds n turn_end events.
func waitTurns(t *testing.T, loop *runtime.Loop, sid string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub, err := loop.Follow(ctx, sid, 0)
	require.NoError(t, err)
	defer sub.Close()
	for n > 0 {
		select {
		case e, ok := <-sub.C():
			require.True(t, ok, "the subscription ended")
			if e.Type == runtime.EvTurnEnd {
				n--
			}
		case <-ctx.Done():
			t.Fatalf("the session did not end its turns within 10 s")
		}
	}
}

// A reply produced while the plugin is down (killed mid-turn, held in
// its restart backoff until the turn has ended) is delivered once it is
// ready again, exactly once.
func TestGateway_ReplyWhilePluginDownIsDeliveredOnce(t *testing.T) {
	m := newSlowModel(t, "slow question")
	e := newEnvWith(t, m.handler())
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	inBackoff, resume := make(chan struct{}), make(chan struct{})
	var held sync.Once
	e.onState = func(s plugin.Status) {
		if s.State == plugin.StateBackoff {
			held.Do(func() {
				close(inBackoff)
				<-resume
			})
		}
	}
	g := e.start(t, "once", plugin.RestartOnFailure, fast, "AGNX_HELPER_OUT="+out,
		"AGNX_HELPER_MARK="+filepath.Join(dir, "mark"), "AGNX_HELPER_SAY=slow question", "AGNX_HELPER_EXIT_AFTER=1")
	first := e.next(t, plugin.StateStarted)
	m.waitAsked(t)
	require.NoError(t, syscall.Kill(first.PID, syscall.SIGKILL))
	<-inBackoff
	m.release()
	sid, _, err := e.app.Chats().Current("helper", "c1")
	require.NoError(t, err)
	waitTurns(t, e.app.Loop, sid, 1) // the answer is in the log; the plugin is down
	close(resume)
	assert.Equal(t, 2, e.next(t, plugin.StateStarted).Run)
	waitDone(t, g) // the helper exits 0 after one message
	assert.Equal(t, []string{"echo: slow question"}, readLines(out))
}

// A reply owed when the daemon stops is delivered after its restart,
// once: the outbox position is durable, and a reply the plugin
// acknowledged is not sent again at the next start.
func TestGateway_ReplyOwedAcrossDaemonRestart(t *testing.T) {
	m := newSlowModel(t, "slow question")
	e := newEnvWith(t, m.handler())
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	env := []string{"AGNX_HELPER_OUT=" + out, "AGNX_HELPER_MARK=" + filepath.Join(dir, "mark"), "AGNX_HELPER_SAY=slow question"}
	g := e.start(t, "once", plugin.RestartOnFailure, fast, env...)
	m.waitAsked(t)
	require.NoError(t, g.Stop(context.Background()))
	m.release()
	sid, _, err := e.app.Chats().Current("helper", "c1")
	require.NoError(t, err)
	waitTurns(t, e.app.Loop, sid, 1)

	e.reopen(t)
	g = e.start(t, "once", plugin.RestartOnFailure, fast, append(env, "AGNX_HELPER_EXIT_AFTER=1")...)
	waitDone(t, g)
	assert.Equal(t, []string{"<shutdown>", "echo: slow question"}, readLines(out))

	e.reopen(t)
	g = e.start(t, "once", plugin.RestartOnFailure, fast, env...)
	e.next(t, plugin.StateReady)
	require.NoError(t, g.Stop(context.Background()))
	assert.Equal(t, []string{"<shutdown>", "echo: slow question", "<shutdown>"}, readLines(out), "nothing is sent twice")
	data, err := e.app.Loop.KV(t.Context(), "plugin/helper/out/"+sid)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"open"`, "the session is idle: the chat no longer follows it")
}

// A plugin that never acknowledges its replies still gets each of them
// once: a reply unacknowledged after AckTimeout counts as delivered, and
// the chat's next reply follows.
func TestGateway_UnacknowledgedReplyCountsAfterTimeout(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	timing := fast
	timing.AckTimeout = 100 * time.Millisecond
	g := e.start(t, "noack", plugin.RestartNever, timing, "AGNX_HELPER_OUT="+out)
	waitDone(t, g)
	assert.Equal(t, []string{"echo: one", "echo: two"}, readLines(out))
}

// Stop first gives the chats what they are owed: a turn that ends after
// Stop began still reaches the plugin, before its shutdown.
func TestGateway_StopDeliversWhatIsOwedFirst(t *testing.T) {
	m := newSlowModel(t, "slow question")
	e := newEnvWith(t, m.handler())
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	e.onState = func(s plugin.Status) {
		if s.State == plugin.StateStopping {
			m.release()
		}
	}
	timing := fast
	timing.StopGrace = 10 * time.Second
	g := e.start(t, "once", plugin.RestartOnFailure, timing, "AGNX_HELPER_OUT="+out,
		"AGNX_HELPER_MARK="+filepath.Join(dir, "mark"), "AGNX_HELPER_SAY=slow question")
	m.waitAsked(t)
	require.NoError(t, g.Stop(context.Background()))
	assert.Equal(t, []string{"echo: slow question", "<shutdown>"}, readLines(out))
}
