package telegram_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
)

// commits reads how many write transactions the store has committed: the
// transaction id of bbolt's newer meta page (each commit is one fsync when
// the store syncs).
func commits(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var page [4096 * 2]byte
	_, err = f.ReadAt(page[:], 0)
	require.NoError(t, err)
	size := binary.LittleEndian.Uint32(page[16+8:])
	require.Contains(t, []uint32{4096}, size, "this reader knows 4 KiB pages")
	// A meta page: the page header (16 bytes), then magic, version, page
	// size, flags (4 each), the root bucket (16), freelist and pgid (8
	// each), then the txid.
	const txidAt = 16 + 16 + 16 + 8 + 8
	a := binary.LittleEndian.Uint64(page[txidAt:])
	b := binary.LittleEndian.Uint64(page[4096+txidAt:])
	return max(a, b)
}

// Delivering costs one commit (one fsync) per reply, the mark before
// its send, and one when the watcher ends: the replies of a turn that
// ran while the gateway was stopped are delivered at the next start with
// nothing else writing meanwhile, so every commit counted is the outbox's.
func TestOutbox_OneCommitPerReply(t *testing.T) {
	const rounds = 5
	replies := []llmtest.Reply{{Text: "hello"}}
	for i := 1; i <= rounds; i++ {
		replies = append(replies, llmtest.Reply{Text: fmt.Sprintf("step %d", i),
			ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "list_dir", Arguments: "{}"}}})
	}
	replies = append(replies, llmtest.Reply{Text: "done"})
	r := newRig(t, llmtest.Script(replies...))
	r.say("hi")
	r.waitText(owner, "hello")
	r.waitIdle("42")
	ctx := context.Background()
	require.NoError(t, r.gw.Stop(ctx))

	sid, _, err := r.app.Chats().Current(telegram.GatewayName, "42")
	require.NoError(t, err)
	sub, err := r.app.Loop.Follow(ctx, sid, runtime.Live)
	require.NoError(t, err)
	_, err = r.app.Loop.Send(ctx, sid, runtime.Input{Content: "go"})
	require.NoError(t, err)
	for e := range sub.C() {
		if e.Type == runtime.EvTurnEnd {
			break
		}
	}
	sub.Close()
	db := r.cfg.DBPath()
	before := commits(t, db)

	gw, err := lite.NewTelegram(r.app, telegram.Options{PollTimeout: time.Second, Sleep: r.sleep})
	require.NoError(t, err)
	require.NoError(t, gw.Start(ctx))
	r.tg.Wait(t, "every reply", func() bool { return len(r.tg.Texts(owner)) == rounds+2 })
	require.NoError(t, gw.Stop(ctx))
	assert.Equal(t, uint64(rounds+1+1), commits(t, db)-before, "one commit per reply and one at the end")
	assert.Equal(t, "done", r.tg.Texts(owner)[rounds+1])
}
