package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// A session whose latest checkpoint cannot be read, and whose older events
// retention moved out of the database, is rebuilt from its archive and
// its stored events; one whose start was discarded is refused with a
// sentence, and the loop goes on.
func TestLoad_UnreadableCheckpointAfterRetention(t *testing.T) {
	for _, mode := range []string{CompactionArchive, CompactionDiscard} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			p := &scripted{summarize: summaries(), answer: toolsOnAsk}
			l, st, stop := testLoop(t, dir, compactAgent(p, 40000))
			ctx := context.Background()
			info, err := l.CreateSession(ctx, NewSession{Agent: "assistant"})
			require.NoError(t, err)
			sid := info.ID
			for _, m := range []string{"one", "two, use the tool", "three"} {
				turnOf(t, l, sid, m)
			}
			res, err := l.Compact(ctx, sid)
			require.NoError(t, err)
			require.Equal(t, CompactSummary, res.Method)
			turnOf(t, l, sid, "four") // its end checkpoints the new window start
			_, live, err := resident(t, l, sid)
			require.NoError(t, err)
			stop()

			st, err = storage.Open(st.Path(), &storage.Options{NoSync: true})
			require.NoError(t, err)
			moved, err := Retain(st, sid, RetainOptions{Mode: mode})
			require.NoError(t, err)
			require.Positive(t, moved.Pruned)
			require.NoError(t, st.Update(func(tx *storage.Tx) error {
				seq, _, err := tx.LatestCheckpoint(sid)
				if err != nil {
					return err
				}
				return tx.PutCheckpoint(sid, seq, []byte("{damaged"))
			}))
			require.NoError(t, st.Close())

			l, _, _ = testLoop(t, dir, compactAgent(p, 40000))
			other, err := l.CreateSession(ctx, NewSession{Agent: "assistant"})
			require.NoError(t, err)
			onLoop(t, l, func() { _, err = l.load(sid) })
			if mode == CompactionDiscard {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "cannot be rebuilt")
				turnOf(t, l, other.ID, "the loop goes on")
				return
			}
			require.NoError(t, err)
			w, got, err := resident(t, l, sid)
			require.NoError(t, err)
			assert.Equal(t, windowOf(&live), w, "the same window as before the restart")
			assert.Equal(t, live.Turns, got.Turns, "rebuilt whole from the archive")
			assert.Equal(t, live.Summary, got.Summary)
			assert.True(t, strings.HasPrefix(got.Preview, "one"), "the first message came back from the archive")
			evs := turnOf(t, l, sid, "five")
			assert.Equal(t, EvTurnEnd, evs[len(evs)-1].Type)
		})
	}
}
