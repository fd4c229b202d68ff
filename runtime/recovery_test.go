package runtime

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

type oneAgent struct{ a *LoadedAgent }

func (o oneAgent) LoadAgent(string) (*LoadedAgent, error) { return o.a, nil }

// writeSession stores a session of n events, as the loop would have: turns
// of user_message, assistant_response, turn_end, with a checkpoint every
// `every` events, so a reload reads the last checkpoint and a tail.
func writeSession(tb testing.TB, st *storage.Store, id string, n, every int) *state {
	s := &state{ID: id}
	t0 := time.Unix(1_700_000_000, 0)
	since := 0
	err := st.Update(func(tx *storage.Tx) error {
		if err := tx.CreateSession(id, []byte(`{}`)); err != nil {
			return err
		}
		put := func(e Event) error {
			s.apply(&e)
			if err := tx.AppendEvent(id, e.Seq, e.AppendJSON(nil)); err != nil {
				return err
			}
			if since++; since >= every {
				if err := tx.PutCheckpoint(id, e.Seq, s.encodeCheckpoint(nil)); err != nil {
					return err
				}
				since = 0
			}
			return nil
		}
		for s.LastSeq < uint64(n) {
			seq := int(s.LastSeq) + 1
			e := Event{Seq: uint64(seq), Time: t0.Add(time.Duration(seq) * time.Second)}
			switch {
			case seq == 1:
				e.Type, e.Agent = EvSessionStart, "assistant"
			case s.TurnActive && s.History[len(s.History)-1].Role == RoleUser:
				e.Type, e.Content = EvAssistant, fmt.Sprintf("answer %d", seq)
			case s.TurnActive:
				e.Type, e.Reason = EvTurnEnd, TurnCompleted
			default:
				e.Type, e.Content = EvUserMessage, fmt.Sprintf("question %d", seq)
			}
			if err := put(e); err != nil {
				return err
			}
			// As the loop does after a turn_end: trim the window.
			if trim, ok := s.trimEvent(20000); ok && e.Type == EvTurnEnd && s.LastSeq < uint64(n) {
				trim.Seq, trim.Time = s.LastSeq+1, e.Time
				if err := put(trim); err != nil {
					return err
				}
			}
		}
		return nil
	})
	require.NoError(tb, err)
	return s
}

func TestLoop_Load10kEvents(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	want := writeSession(t, st, "big", 10_000, 50)
	require.Equal(t, uint64(10_000), want.LastSeq)

	agent := &LoadedAgent{Spec: &agents.Agent{Name: "assistant",
		Session: agents.Session{Context: agents.Context{MaxHistoryTokens: 20000}}}}
	l := New(Options{Store: st, Agents: oneAgent{agent}})
	start := time.Now()
	s, err := l.load("big")
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("reopened a 10,000-event session from checkpoint + tail in %v", took)

	assert.Equal(t, want.LastSeq, s.st.LastSeq)
	assert.Equal(t, want.Turns, s.st.Turns)
	assert.Equal(t, want.History, s.st.History, "checkpoint + tail rebuilds the same context")
	assert.Equal(t, want.HistTokens, s.st.HistTokens)
	assert.LessOrEqual(t, s.st.HistTokens, 20000, "the window stays within the budget")
	assert.Less(t, len(s.st.History), 10_000, "the state holds the window, not the log")

	// The same state comes from replaying the whole log without checkpoints.
	full := &state{ID: "big"}
	require.NoError(t, ReadEvents(st, "big", 0, func(e Event) error {
		full.apply(&e)
		return nil
	}))
	assert.Equal(t, full.History, s.st.History)
}

func BenchmarkRecovery10k(b *testing.B) {
	st, err := storage.Open(filepath.Join(b.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(b, err)
	defer st.Close()
	writeSession(b, st, "big", 10_000, 50)
	agent := &LoadedAgent{Spec: &agents.Agent{Name: "assistant"}}
	b.ReportAllocs()
	for b.Loop() {
		l := New(Options{Store: st, Agents: oneAgent{agent}})
		if _, err := l.load("big"); err != nil {
			b.Fatal(err)
		}
	}
}
