package runtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// heldLoop is a loop that is not running, with n resident sessions of
// the same size, the first the least recently used.
func heldLoop(n int, heldBytes int64) (*Loop, []*session) {
	l := New(Options{HeldBytes: heldBytes})
	t0 := time.Unix(1_700_000_000, 0)
	var ss []*session
	for i := range n {
		st := &state{ID: string(rune('a' + i)), History: make([]Message, 10), HistTokens: 100}
		s := &session{st: st, used: t0.Add(time.Duration(i) * time.Second)}
		l.sessions[st.ID] = s
		ss = append(ss, s)
	}
	return l, ss
}

func residentIDs(l *Loop) []string {
	var ids []string
	for id := range l.sessions {
		ids = append(ids, id)
	}
	return ids
}

// Over the bound, the least recently used idle sessions go until the rest
// fit; one that is watched stays, and counts.
func TestFitHeld_DropsLeastRecentlyUsedIdleSessions(t *testing.T) {
	l, ss := heldLoop(4, 0)
	size := ss[0].heldSize()
	l.opts.HeldBytes = 2 * size
	ss[0].subs = []*Subscription{{}} // the oldest, but someone watches it

	assert.Equal(t, 2, l.fitHeld())
	assert.ElementsMatch(t, []string{"a", "d"}, residentIDs(l), "b and c were the least recently used idle ones")
	assert.Empty(t, l.heldScratch, "the pass keeps no session alive")

	assert.Zero(t, l.fitHeld(), "within the bound nothing more goes")
}

func TestFitHeld_KeepsBusySessions(t *testing.T) {
	l, ss := heldLoop(3, 1)
	ss[0].turn = &turn{}
	ss[1].st.TurnActive = true // a turn left active, not yet resumed
	l.dirty[ss[2]] = struct{}{}
	assert.Zero(t, l.fitHeld(), "a running turn, an active one and an uncommitted change keep theirs")
	assert.Len(t, l.sessions, 3)
}

func TestFitHeld_Unbounded(t *testing.T) {
	l, _ := heldLoop(3, -1)
	assert.Zero(t, l.fitHeld())
	assert.Len(t, l.sessions, 3)
}

// The checkpoint says how long the window was, so the replay sets that
// much aside at once; a hint that lies only costs memory, within a bound.
func TestCheckpoint_WindowLenHint(t *testing.T) {
	s := &state{ID: "s", WindowSeq: 3, LastSeq: 9, History: make([]Message, 5)}
	var p fastjson.Parser
	cp, err := decodeCheckpoint(&p, s.encodeCheckpoint(nil))
	require.NoError(t, err)
	assert.Equal(t, 5, cp.windowLen)

	cp, err = decodeCheckpoint(&p, []byte(`{"v":2,"seq":9,"id":"s","window_seq":3,"window_len":-4}`))
	require.NoError(t, err)
	assert.Equal(t, -4, cp.windowLen, "decoded as is; replayWindow ignores what is not positive")
}
