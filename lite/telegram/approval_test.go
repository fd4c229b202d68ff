package telegram_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// askWhileStopped has the agent ask for approval while the gateway is
// stopped; it returns the session and the call waiting.
func askWhileStopped(t *testing.T, r *rig) (sid, callID string, sub *runtime.Subscription) {
	writeFile(t, filepath.Join(r.cfg.AgentsDir, "assistant", "policy.yaml"), "apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n")
	r.say("hi")
	r.waitText(owner, "echo: hi")
	r.waitIdle("42")
	ctx := context.Background()
	require.NoError(t, r.gw.Stop(ctx))
	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	sub, err = r.app.Loop.Follow(ctx, sid, runtime.Live)
	require.NoError(t, err)
	t.Cleanup(sub.Close)
	_, err = r.app.Loop.Send(ctx, sid, runtime.Input{Content: "use list_dir {}"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvApprovalRequired {
			return sid, e.CallID, sub
		}
	}
	t.Fatal("no approval was asked")
	return
}

func restart(t *testing.T, r *rig) {
	gw, err := lite.NewTelegram(r.app, telegram.Options{PollTimeout: time.Second, Sleep: r.sleep})
	require.NoError(t, err)
	require.NoError(t, gw.Start(context.Background()))
	t.Cleanup(func() { assert.NoError(t, gw.Stop(context.Background())) })
}

// An approval decided elsewhere (the HTTP API) while the gateway was down
// is not asked again when it comes back; the answer is delivered.
func TestApproval_DecidedWhileStoppedNotAsked(t *testing.T) {
	r := newRig(t, nil)
	sid, call, sub := askWhileStopped(t, r)
	require.NoError(t, r.app.Loop.Approve(context.Background(), sid, call, runtime.AllowOnce))
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	restart(t, r)
	r.waitContains(owner, "list_dir said:")
	r.waitIdle("42")
	for _, s := range r.tg.Texts(owner) {
		assert.NotContains(t, s, "The agent wants to use", "a decided approval is not asked")
	}
	assert.Len(t, r.tg.Texts(owner), 2)
}

// An approval still waiting when the gateway comes back is asked, and a
// press answers it.
func TestApproval_PendingWhileStoppedAsked(t *testing.T) {
	r := newRig(t, nil)
	askWhileStopped(t, r)
	restart(t, r)
	ask := r.waitContains(owner, "The agent wants to use list_dir")
	require.Len(t, ask.Keyboard, 3)
	r.tg.Queue(tgtest.Press(owner, &ask, ask.Keyboard[0]))
	r.waitContains(owner, "list_dir said:")
	r.waitIdle("42")
	n := 0
	for _, s := range r.tg.Texts(owner) {
		if strings.Contains(s, "The agent wants to use") {
			n++
		}
	}
	assert.Equal(t, 1, n, "asked once")
}
