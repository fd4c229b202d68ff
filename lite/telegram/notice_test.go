package telegram

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// kvChats is a Chats holding only the gateway's kv (the outbox records).
type kvChats struct {
	Chats // the rest is not called
	mu    sync.Mutex
	kv    map[string][]byte
}

func (c *kvChats) KV(key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kv[key], nil
}

func (c *kvChats) PutKV(key string, val []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kv[key] = val
	return nil
}

// A notice that arrives while a turn streams its answer is a message of
// its own: the preview keeps streaming, and the turn's answer lands in it.
func TestWatcher_NoticeLeavesPreview(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, tg := paceRig(t)
		w.o.o.Chats = &kvChats{kv: map[string][]byte{}}
		w.until = ^uint64(0) // a turn runs: only its end asks whether to end
		feed := make(tokens)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.serve(ctx, feed)
		}()
		send := func(e runtime.Event) {
			feed <- e
			synctest.Wait()
		}
		send(runtime.Event{Type: runtime.EvToken, Content: "Working"})
		require.Len(t, tg.Chat(42), 1, "the preview")
		send(runtime.Event{Type: runtime.EvAssistant, Seq: 5, Content: "**reminder**: tea", Origin: "schedule:s1"})
		require.Len(t, tg.Chat(42), 2, "the notice is a message of its own")
		assert.Equal(t, "reminder: tea", tg.Chat(42)[1].Plain())
		assert.Empty(t, tg.Calls("editMessageText"), "the preview was not touched")
		assert.NotZero(t, w.rec.Preview, "the preview is still the turn's")
		assert.Equal(t, uint64(5), w.rec.Delivered)

		send(runtime.Event{Type: runtime.EvToken, Content: " on it"})
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, "Working on it", tg.Chat(42)[0].Plain(), "the preview goes on streaming")
		send(runtime.Event{Type: runtime.EvAssistant, Seq: 6, Content: "Working on it. Done."})
		require.Len(t, tg.Chat(42), 2)
		assert.Equal(t, "Working on it. Done.", tg.Chat(42)[0].Plain(), "the answer lands in the preview")
		assert.Equal(t, "reminder: tea", tg.Chat(42)[1].Plain())
		cancel()
		<-done
	})
}
