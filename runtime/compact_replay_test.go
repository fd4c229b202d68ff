package runtime

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/storage"
)

// sessionGen writes a random but well-formed session log, as the loop
// could have: turns with tool rounds, approvals, messages and notices
// that arrive during a turn, passive and silent messages, compactions
// (summaries, trims, and now and then one whose mark is unknown), and
// checkpoints at random points.
type sessionGen struct {
	rng    *rand.Rand
	s      *state
	tx     *storage.Tx
	budget int
	since  int
	every  int
}

func (g *sessionGen) put(e Event) {
	e.Seq = g.s.LastSeq + 1
	e.Time = time.Unix(1_700_000_000+int64(e.Seq), 0)
	g.s.apply(&e)
	if err := g.tx.AppendEvent(g.s.ID, e.Seq, e.AppendJSON(nil)); err != nil {
		panic(err)
	}
	if g.since++; g.since >= g.every || e.Type == EvTurnEnd || e.Type == EvHistoryCompaction {
		if err := g.tx.PutCheckpoint(g.s.ID, e.Seq, g.s.encodeCheckpoint(nil)); err != nil {
			panic(err)
		}
		g.since, g.every = 0, 1+g.rng.IntN(12)
	}
	if e.Type == EvTurnEnd {
		g.compact()
	}
}

func (g *sessionGen) text(what string) string {
	return what + " " + strings.Repeat("x", g.rng.IntN(200))
}

func (g *sessionGen) compact() {
	switch r := g.rng.IntN(10); {
	case r < 4:
		if e, ok := g.s.trimEvent(g.budget); ok {
			g.put(e)
		}
	case r < 8:
		if g.s.HistTokens <= g.budget {
			return
		}
		if p, ok := g.s.plan(g.budget / 2); ok {
			g.put(g.s.compactionEvent(p, CompactSummary, g.text("summary")))
		}
	case r < 9:
		g.put(Event{Type: EvHistoryCompaction, Content: "lost", Compaction: &Compaction{Upto: 1 << 40, Method: CompactSummary}})
	}
}

func (g *sessionGen) step() {
	s, rng := g.s, g.rng
	if !s.TurnActive {
		switch rng.IntN(10) {
		case 0:
			g.put(Event{Type: EvUserMessage, Content: g.text("passive"), Passive: true})
		case 1:
			g.put(Event{Type: EvAssistant, Content: g.text("notice"), Origin: "schedule"})
		case 2:
			g.put(Event{Type: EvSilentMessage, Content: g.text("silent")})
		default:
			g.put(Event{Type: EvUserMessage, Content: g.text("question")})
		}
		return
	}
	if len(s.Approvals) > 0 && rng.IntN(3) == 0 {
		dec := []string{AllowOnce, AllowAlways, DenyCall}[rng.IntN(3)]
		g.put(Event{Type: EvApprovalDecision, CallID: s.Approvals[0].CallID, Decision: dec})
		return
	}
	r := rng.IntN(12)
	if len(s.OpenCalls) > 0 {
		c := s.OpenCalls[rng.IntN(len(s.OpenCalls))]
		switch {
		case r < 6:
			g.put(Event{Type: EvToolResult, CallID: c.ID, Content: g.text("result"), Success: rng.IntN(4) > 0})
		case r < 7:
			g.put(Event{Type: EvApprovalRequired, CallID: c.ID, ToolName: c.Name, Content: "rm x"})
		case r < 8:
			g.put(Event{Type: EvUserMessage, Content: g.text("meanwhile"), Passive: rng.IntN(2) == 0})
		case r < 9:
			g.put(Event{Type: EvAssistant, Content: g.text("notice"), Origin: "process"})
		case r < 10:
			g.put(Event{Type: EvUserMessage, Content: g.text("steer"), Steering: true})
		default:
			g.put(Event{Type: EvTurnEnd, Reason: TurnInterrupted})
		}
		return
	}
	switch {
	case r < 4:
		var calls []ToolCall
		for i := range 1 + rng.IntN(2) {
			calls = append(calls, ToolCall{ID: fmt.Sprintf("c%d_%d", s.LastSeq+1, i), Name: "lookup", Arguments: `{"q":1}`})
		}
		g.put(Event{Type: EvAssistant, Content: g.text(""), ToolCalls: calls,
			Thinking: []ThinkingBlock{{Text: "hm", Signature: "sig"}}})
	case r < 7:
		g.put(Event{Type: EvAssistant, Content: g.text("answer")})
		g.put(Event{Type: EvTurnEnd, Reason: TurnCompleted})
	case r < 8:
		g.put(Event{Type: EvUserMessage, Content: g.text("steer"), Steering: true})
	case r < 10:
		g.put(Event{Type: EvUserMessage, Content: g.text("next"), Passive: rng.IntN(3) == 0})
	default:
		g.put(Event{Type: EvTurnEnd, Reason: TurnFailed})
	}
}

// Replay equivalence: for random logs, the state loaded from the latest
// checkpoint and the log, and the one folded from the whole log, are the
// live state: history, tokens, open calls, pending messages, summary,
// window start and marks.
func TestCompaction_ReplayEquivalence(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	const budget = 400
	agent := &LoadedAgent{Spec: &agents.Agent{Name: "assistant",
		Session: agents.Session{Context: agents.Context{MaxHistoryTokens: budget}}}}
	compactions := 0
	for seed := range 300 {
		id := fmt.Sprintf("s%d", seed)
		g := &sessionGen{rng: rand.New(rand.NewPCG(uint64(seed), 7)), s: &state{ID: id}, budget: budget, every: 5}
		require.NoError(t, st.Update(func(tx *storage.Tx) error {
			if err := tx.CreateSession(id, []byte(`{}`)); err != nil {
				return err
			}
			g.tx = tx
			g.put(Event{Type: EvSessionStart, Agent: "assistant"})
			for range 20 + g.rng.IntN(400) {
				g.step()
			}
			return nil
		}))
		live := windowOf(g.s)
		require.NoError(t, toolPairs(g.s.History), "seed %d", seed)
		if g.s.WindowSeq > 1 {
			compactions++
		}

		l := New(Options{Store: st, Agents: oneAgent{agent}})
		loaded, err := l.load(id)
		require.NoError(t, err)
		require.Equal(t, live, windowOf(loaded.st), "seed %d: checkpoint and tail", seed)
		assert.Equal(t, g.s.TrimNoticed, loaded.st.TrimNoticed)
		require.Len(t, loaded.st.Silent, len(g.s.Silent))
		for i, n := range g.s.Silent {
			assert.Equal(t, n.Content, loaded.st.Silent[i].Content)
			assert.True(t, n.At.Equal(loaded.st.Silent[i].At))
		}

		full := &state{ID: id}
		require.NoError(t, ReadEvents(st, id, 0, func(e Event) error {
			full.apply(&e)
			return nil
		}))
		require.Equal(t, live, windowOf(full), "seed %d: the whole log", seed)
	}
	assert.Greater(t, compactions, 100, "most sessions were compacted")
}

// A session whose latest checkpoint is version 1 (it holds the history,
// the log before it was trimmed in apply) loads, writes its history
// inline until its first compaction, and from then on does not.
func TestCheckpoint_Version1Loads(t *testing.T) {
	st, err := storage.Open(filepath.Join(t.TempDir(), "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	defer st.Close()
	cp, err := os.ReadFile("testdata/checkpoint_v1/checkpoint_11.json")
	require.NoError(t, err)
	f, err := os.Open("testdata/checkpoint_v1/events.jsonl")
	require.NoError(t, err)
	defer f.Close()
	const id = "s_v1fixture"
	var p fastjson.Parser
	full := &state{ID: id}
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		if err := tx.CreateSession(id, []byte(`{}`)); err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			e, err := DecodeEvent(&p, sc.Bytes())
			require.NoError(t, err)
			full.apply(&e)
			if err := tx.AppendEvent(id, e.Seq, sc.Bytes()); err != nil {
				return err
			}
			if e.Seq == 11 {
				if err := tx.PutCheckpoint(id, 11, cp); err != nil {
					return err
				}
			}
		}
		return sc.Err()
	}))

	agent := &LoadedAgent{Spec: &agents.Agent{Name: "assistant"}}
	l := New(Options{Store: st, Agents: oneAgent{agent}})
	s, err := l.load(id)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), s.st.WindowSeq, "legacy: the history came with the checkpoint")
	assert.Equal(t, full.History, s.st.History)
	assert.Equal(t, full.HistTokens, s.st.HistTokens)
	assert.Equal(t, 3, s.st.Turns)
	require.Len(t, s.st.marks, 1, "the turn after the checkpoint left a mark")

	// Its checkpoints carry the history (and marks) until it compacts.
	again, err := decodeCheckpoint(&p, s.st.encodeCheckpoint(nil))
	require.NoError(t, err)
	assert.Equal(t, s.st.History, again.History)
	assert.Equal(t, s.st.marks, again.marks)

	// One more exchange, then the first compaction moves it to
	// checkpoints without the history.
	_, ok := s.st.plan(0)
	require.False(t, ok, "the newest exchange stays: nothing to cut yet")
	var evs []Event
	for _, e := range []Event{{Type: EvUserMessage, Content: "more"}, {Type: EvAssistant, Content: "sure"}, {Type: EvTurnEnd, Reason: TurnCompleted}} {
		e.Seq, e.Time = s.st.LastSeq+1, time.Unix(1_800_000_000, 0).UTC()
		s.st.apply(&e)
		evs = append(evs, e)
	}
	p0, ok := s.st.plan(0)
	require.True(t, ok)
	e := s.st.compactionEvent(p0, CompactSummary, "they read notes.txt")
	e.Seq, e.Time = s.st.LastSeq+1, time.Unix(1_800_000_000, 0).UTC()
	s.st.apply(&e)
	evs = append(evs, e)
	require.NoError(t, st.Update(func(tx *storage.Tx) error {
		for _, e := range evs {
			if err := tx.AppendEvent(id, e.Seq, e.AppendJSON(nil)); err != nil {
				return err
			}
		}
		return tx.PutCheckpoint(id, e.Seq, s.st.encodeCheckpoint(nil))
	}))
	assert.Equal(t, uint64(15), s.st.WindowSeq)
	assert.Equal(t, []Message{{Role: RoleUser, Content: "more"}, {Role: RoleAssistant, Content: "sure"}}, s.st.History)
	assert.NotContains(t, string(s.st.encodeCheckpoint(nil)), "Nothing else")
	l = New(Options{Store: st, Agents: oneAgent{agent}})
	back, err := l.load(id)
	require.NoError(t, err)
	assert.Equal(t, windowOf(s.st), windowOf(back.st))
	assert.Equal(t, "they read notes.txt", back.st.Summary)
}

// A damaged checkpoint never panics the reader, and what it reads
// encodes again.
func FuzzDecodeCheckpoint(f *testing.F) {
	v1, err := os.ReadFile("testdata/checkpoint_v1/checkpoint_11.json")
	require.NoError(f, err)
	f.Add(v1)
	f.Add([]byte(`{"v":2,"seq":9,"id":"s","window_seq":5,"summary":"hi","trim_noticed":true}`))
	f.Add([]byte(`{"v":2,"seq":9,"window_seq":0,"history":[{"role":"user","content":"x"}],"marks":[[1,7],[-1,2],[9,9],["a"]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p fastjson.Parser
		s, err := decodeCheckpoint(&p, data)
		if err != nil {
			return
		}
		for _, m := range s.marks {
			require.LessOrEqual(t, m.at, len(s.History))
		}
		_, err = decodeCheckpoint(&p, s.encodeCheckpoint(nil))
		require.NoError(t, err)
	})
}
