package telegram_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

func TestPoll_429RetryAfterHonoured(t *testing.T) {
	r := newRig(t, nil)
	r.tg.Fail("getUpdates", tgtest.TooMany(5))
	r.tg.Fail("sendMessage", tgtest.TooMany(3))
	// A poll may be in flight already and would carry the message before
	// the refusal is played (and waited for): the message goes out once
	// it was.
	r.tg.Wait(t, "the refused poll", func() bool { return r.tg.FaultsLeft("getUpdates") == 0 })
	r.say("slow down")
	r.waitText(owner, "echo: slow down")
	assert.Contains(t, r.slept(), 5*time.Second, "the poll waited retry_after")
	assert.Contains(t, r.slept(), 3*time.Second, "the send waited retry_after")
	assert.Len(t, r.tg.Chat(owner), 1, "the refused send was made once more, not twice")
}

func TestPoll_409ReportedAndRetried(t *testing.T) {
	r := newRig(t, nil)
	r.tg.Fail("getUpdates", tgtest.Conflict)
	// A poll may be in flight already and would carry the message before
	// the conflict is played: the message goes out once it was.
	r.tg.Wait(t, "the conflict", func() bool { return r.tg.FaultsLeft("getUpdates") == 0 })
	r.say("still there?")
	r.waitText(owner, "echo: still there?")
	assert.Contains(t, r.log.String(), "another program is polling this bot with the same token (409 Conflict)")
	assert.NotContains(t, r.log.String(), tgtest.Token, "the token never reaches the log")
}

func TestPoll_DroppedConnectionRecovers(t *testing.T) {
	r := newRig(t, nil)
	r.tg.Fail("getUpdates", tgtest.Fault{Drop: true})
	r.tg.Fail("getUpdates", tgtest.Fault{Drop: true})
	// A poll may already be in flight; the message goes out once both
	// drops were played, so it really comes through a recovered poller.
	r.tg.Wait(t, "both drops", func() bool { return r.tg.FaultsLeft("getUpdates") == 0 })
	r.say("after the drop")
	r.waitText(owner, "echo: after the drop")
	assert.Contains(t, r.log.String(), "cannot reach Telegram")
	assert.NotContains(t, r.log.String(), tgtest.Token)
	assert.Len(t, r.slept(), 2, "one backoff per failure")
}

// The watchdog: a poll the server never answers is abandoned after the
// long-poll timeout plus the grace period (1 s + 0.3 s here) and restarted.
func TestPoll_HungPollRestarted(t *testing.T) {
	r := newRig(t, nil)
	r.tg.Wait(t, "the first poll", func() bool { return len(r.tg.Calls("getUpdates")) > 0 })
	r.tg.Fail("getUpdates", tgtest.Fault{Hang: true})
	before := len(r.tg.Calls("getUpdates"))
	// The poll in flight answers after its timeout; the next one hangs.
	r.tg.Wait(t, "the hanging poll", func() bool { return len(r.tg.Calls("getUpdates")) > before })
	r.say("wake up")
	r.waitText(owner, "echo: wake up")
	assert.Contains(t, r.log.String(), "telegram poll hung past its deadline")
}

func TestPoll_OffsetSurvivesRestart(t *testing.T) {
	r := newRig(t, nil)
	r.say("one")
	r.waitText(owner, "echo: one")
	r.tg.Queue(tgtest.Private(77, "stranger"))
	r.waitContains(77, "private bot")
	r.waitConsumed()
	raw, err := r.app.Chats().KV("telegram/offset")
	if assert.NoError(t, err) {
		assert.Equal(t, "103", strings.TrimSpace(string(raw)), "past the refused update too")
	}
}
