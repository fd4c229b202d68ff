package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An imported session longer than its agent's budget is stored with a
// trim, so its first load replays no more than the window; one exported
// with its compactions keeps them, renumbered, and its window.
func TestImportSession_Compacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 600
		p := &scripted{answer: toolsOnAsk, summarize: summaries()}
		l, _, _ := testLoop(t, t.TempDir(), compactAgent(p, budget))
		ctx := context.Background()

		long := []Event{{Type: EvSessionStart, Agent: "assistant"}}
		for i := range 100 {
			long = append(long, Event{Type: EvUserMessage, Content: fmt.Sprintf("q%d %s", i, strings.Repeat("milk ", 20))},
				Event{Type: EvAssistant, Content: "a " + strings.Repeat("milk ", 20)},
				Event{Type: EvTurnEnd, Reason: TurnCompleted})
		}
		info, err := l.ImportSession(ctx, long)
		require.NoError(t, err)
		evs := logEvents(t, l, info.ID)
		last := evs[len(evs)-1]
		require.Equal(t, EvHistoryCompaction, last.Type)
		assert.Equal(t, CompactTrim, last.Compaction.Method)
		var loaded state
		var lerr error
		onLoop(t, l, func() {
			var s *session
			if s, lerr = l.load(info.ID); lerr == nil {
				loaded = *s.st
			}
		})
		require.NoError(t, lerr)
		checkWindow(t, &loaded, budget)
		assert.Equal(t, last.Compaction.Upto, loaded.WindowSeq)

		// A session compacted here, exported (its log) and imported again.
		made, err := l.CreateSession(ctx, NewSession{Agent: "assistant"})
		require.NoError(t, err)
		for i := range 20 {
			turnOf(t, l, made.ID, fmt.Sprintf("q%d %s", i, strings.Repeat("milk ", 20)))
			synctest.Wait()
		}
		orig, _, err := resident(t, l, made.ID)
		require.NoError(t, err)
		exported := logEvents(t, l, made.ID)
		require.Greater(t, countType(exported, EvHistoryCompaction, ""), 0)
		// Agnx's state.json still holds the whole conversation.
		x := NewAgnxWriter(io.Discard)
		for _, e := range exported {
			require.NoError(t, x.Write(e))
		}
		data, err := x.State("s")
		require.NoError(t, err)
		var agnx struct{ Conversation []json.RawMessage }
		require.NoError(t, json.Unmarshal(data, &agnx))
		assert.Len(t, agnx.Conversation, 40, "20 questions, 20 answers")

		again, err := l.ImportSession(ctx, exported)
		require.NoError(t, err)
		onLoop(t, l, func() {
			var s *session
			if s, lerr = l.load(again.ID); lerr == nil {
				loaded = *s.st
			}
		})
		require.NoError(t, lerr)
		assert.Equal(t, orig.History, loaded.History)
		assert.Equal(t, orig.Summary, loaded.Summary)
		assert.Equal(t, orig.WindowSeq, loaded.WindowSeq, "the same numbering from 1")
	})
}
