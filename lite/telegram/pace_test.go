package telegram

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// tokens is a feed of live tokens only: the streamed preview and the
// typing indicator, with no outbox record involved.
type tokens chan runtime.Event

func (t tokens) C() <-chan runtime.Event { return t }
func (t tokens) Err() error              { return nil }
func (t tokens) Deleted() bool           { return false }

// paceRig is a watcher talking to an in-process fake Bot API, for tests
// under testing/synctest (the fake clock stops at network I/O).
func paceRig(t *testing.T) (*watcher, *tgtest.Server) {
	tg := tgtest.NewInProcess()
	t.Cleanup(tg.Close)
	o := &Options{Token: tgtest.Token, BaseURL: "http://telegram.test", HTTPClient: &http.Client{Transport: tg.Transport()},
		EditInterval: time.Second, TypingInterval: 4 * time.Second}
	o.defaults()
	b := newBot(o)
	return &watcher{o: &outbox{o: o, bot: b}, bot: b, sid: "s1", chat: 42}, tg
}

// The preview is sent with the first token, then edited at most once per
// EditInterval however fast tokens come; "typing…" is renewed every
// TypingInterval.
func TestWatcher_PreviewAndTypingPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, tg := paceRig(t)
		feed := make(tokens)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.serve(ctx, feed)
		}()
		say := func(s string) {
			feed <- runtime.Event{Type: runtime.EvToken, Content: s}
			synctest.Wait()
		}
		edits := func() int { return len(tg.Calls("editMessageText")) }

		say("Hello")
		require.Len(t, tg.Chat(42), 1, "the preview goes out with the first token")
		assert.Equal(t, "Hello", tg.Chat(42)[0].Plain())
		say(" world")
		say(",")
		assert.Equal(t, 0, edits(), "the next edit waits for the interval")
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 0, edits())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 1, edits(), "one edit for both tokens, at 1 s")
		assert.Equal(t, "Hello world,", tg.Chat(42)[0].Plain())

		say(" again") // at 1 s, just after an edit: waits until 2 s
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 1, edits())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 2, edits())
		assert.Equal(t, "Hello world, again", tg.Chat(42)[0].Plain())
		assert.Len(t, tg.Chat(42), 1, "all in one message")

		assert.Empty(t, tg.Calls("sendChatAction"), "no typing before 4 s")
		time.Sleep(2 * time.Second) // 4 s
		synctest.Wait()
		assert.Len(t, tg.Calls("sendChatAction"), 1)
		time.Sleep(4 * time.Second) // 8 s
		synctest.Wait()
		assert.Len(t, tg.Calls("sendChatAction"), 2)
		assert.Equal(t, 2, edits(), "no edit without new tokens")

		cancel()
		<-done
	})
}

// While an approval waits, "typing…" is not shown: the agent waits for
// the user, not the other way round.
func TestWatcher_NoTypingWhileAsking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, tg := paceRig(t)
		w.asks = 1
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.serve(ctx, make(tokens))
		}()
		time.Sleep(9 * time.Second)
		synctest.Wait()
		assert.Empty(t, tg.Calls("sendChatAction"))
		cancel()
		<-done
	})
}
