package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolsOnAsk answers a user message that says "tool" with a lookup call,
// and everything else with a padded answer.
func toolsOnAsk(req *Request) (*Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == RoleUser && strings.Contains(last.Content, "tool") {
		return &Response{Message: Message{Role: RoleAssistant,
			ToolCalls: []ToolCall{{ID: "", Name: "lookup", Arguments: `{"q":"milk"}`}}}}, nil
	}
	return say("the answer is " + strings.Repeat("milk ", 30)), nil
}

func countType(evs []Event, typ EventType, code string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ && (code == "" || e.Code == code) {
			n++
		}
	}
	return n
}

func logEvents(t *testing.T, l *Loop, sid string) []Event {
	t.Helper()
	var evs []Event
	require.NoError(t, ReadEvents(l.opts.Store, sid, 0, func(e Event) error {
		evs = append(evs, e)
		return nil
	}))
	return evs
}

// A 2,000-turn session with tool calls and a small budget: after every
// turn end (and its compaction) the window is within the budget and its
// tool pairs are whole; each summary reaches the next request's system
// prompt; a reload rebuilds the same window as the live one.
func TestCompaction_LongSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget, turns = 1500, 2000
		p := &scripted{answer: toolsOnAsk, summarize: summaries()}
		l, _, _ := testLoop(t, t.TempDir(), compactAgent(p, budget))
		info, err := l.CreateSession(context.Background(), NewSession{Agent: "assistant"})
		require.NoError(t, err)
		sid := info.ID
		summary := ""
		for i := range turns {
			text := fmt.Sprintf("question %d %s", i, strings.Repeat("about milk ", 15))
			if i%3 == 0 {
				text += " use the tool"
			}
			evs := turnOf(t, l, sid, text)
			require.Equal(t, TurnCompleted, evs[len(evs)-1].Reason, "turn %d", i)
			if summary != "" {
				reqs := p.requests()
				var first *Request
				for _, r := range reqs {
					if !isSummaryCall(r) {
						first = r
					}
				}
				require.Contains(t, first.System, summaryHeader+summary, "turn %d: the summary is in the request", i)
			}
			synctest.Wait() // the compaction, if any, is done
			_, st, err := resident(t, l, sid)
			require.NoError(t, err)
			checkWindow(t, &st, budget)
			require.Equal(t, RoleUser, st.History[0].Role, "the window starts with a user message")
			summary = st.Summary
			if i%250 == 249 {
				before, after := reload(t, l, sid)
				require.Equal(t, before, after, "turn %d: a reload rebuilds the live window", i)
			}
		}
		evs := logEvents(t, l, sid)
		compactions := countType(evs, EvHistoryCompaction, "")
		assert.Greater(t, compactions, 100, "the window was compacted again and again")
		assert.Zero(t, countType(evs, EvError, ""), "no errors, no trims")
		for _, e := range evs {
			if e.Type == EvHistoryCompaction {
				require.Equal(t, CompactSummary, e.Compaction.Method)
				require.LessOrEqual(t, e.Compaction.TokensAfter, budget)
			}
		}
		assert.Len(t, evs, int(evs[len(evs)-1].Seq), "the log keeps every event")
	})
}

// A summary call that fails trims instead, and the session is told once,
// also across a restart.
func TestCompaction_TrimWhenSummaryFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const budget = 600
		dir := t.TempDir()
		p := &scripted{answer: toolsOnAsk, summarize: failing}
		l, _, stop := testLoop(t, dir, compactAgent(p, budget))
		info, err := l.CreateSession(context.Background(), NewSession{Agent: "assistant"})
		require.NoError(t, err)
		sid := info.ID
		for i := range 8 {
			turnOf(t, l, sid, fmt.Sprintf("question %d %s", i, strings.Repeat("milk ", 40)))
			synctest.Wait()
			_, st, err := resident(t, l, sid)
			require.NoError(t, err)
			checkWindow(t, &st, budget)
		}
		evs := logEvents(t, l, sid)
		require.Equal(t, 1, countType(evs, EvError, CodeHistoryTrimmed), "told once")
		assert.Greater(t, countType(evs, EvHistoryCompaction, ""), 1)
		for _, e := range evs {
			if e.Type == EvHistoryCompaction {
				assert.Equal(t, CompactTrim, e.Compaction.Method)
				assert.Empty(t, e.Content)
			}
			if e.Code == CodeHistoryTrimmed {
				assert.Contains(t, e.Content, "the summary call failed")
			}
		}
		stop()

		l, _, _ = testLoop(t, dir, compactAgent(p, budget))
		for i := range 4 {
			turnOf(t, l, sid, fmt.Sprintf("again %d %s", i, strings.Repeat("milk ", 40)))
			synctest.Wait()
		}
		evs = logEvents(t, l, sid)
		assert.Equal(t, 1, countType(evs, EvError, CodeHistoryTrimmed), "still once after a restart")
		_, st, err := resident(t, l, sid)
		require.NoError(t, err)
		checkWindow(t, &st, budget)
	})
}

// An agent with summarize: false trims without calling the model.
func TestCompaction_SummarizeOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &scripted{answer: toolsOnAsk, summarize: summaries()}
		ag := compactAgent(p, 600)
		off := false
		ag.Spec.Session.Context.Summarize = &off
		l, _, _ := testLoop(t, t.TempDir(), ag)
		info, err := l.CreateSession(context.Background(), NewSession{Agent: "assistant"})
		require.NoError(t, err)
		for i := range 6 {
			turnOf(t, l, info.ID, fmt.Sprintf("question %d %s", i, strings.Repeat("milk ", 40)))
			synctest.Wait()
		}
		for _, r := range p.requests() {
			require.False(t, isSummaryCall(r), "no summary call")
		}
		evs := logEvents(t, l, info.ID)
		require.Equal(t, 1, countType(evs, EvError, CodeHistoryTrimmed))
		for _, e := range evs {
			if e.Code == CodeHistoryTrimmed {
				assert.Contains(t, e.Content, "summarize is false")
			}
		}
	})
}

// Loop.Compact summarises all but the newest exchange; it does nothing
// with one exchange, refuses while a turn runs, and refuses an ended
// session.
func TestLoop_Compact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var once sync.Once
		p := &scripted{summarize: summaries(), answer: func(req *Request) (*Response, error) {
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, "wait") {
				<-gate
			}
			return toolsOnAsk(req)
		}}
		l, _, _ := testLoop(t, t.TempDir(), compactAgent(p, 40000))
		ctx := context.Background()
		info, err := l.CreateSession(ctx, NewSession{Agent: "assistant"})
		require.NoError(t, err)
		sid := info.ID

		turnOf(t, l, sid, "first")
		res, err := l.Compact(ctx, sid)
		require.NoError(t, err)
		assert.Equal(t, CompactResult{Method: CompactNone, TokensBefore: res.TokensBefore, TokensAfter: res.TokensBefore}, res)
		assert.Zero(t, countType(logEvents(t, l, sid), EvHistoryCompaction, ""), "nothing to compact, no event")

		turnOf(t, l, sid, "second, use the tool")
		turnOf(t, l, sid, "third")
		res, err = l.Compact(ctx, sid)
		require.NoError(t, err)
		assert.Equal(t, CompactSummary, res.Method)
		assert.Less(t, res.TokensAfter, res.TokensBefore)
		evs := logEvents(t, l, sid)
		require.Equal(t, EvHistoryCompaction, evs[len(evs)-1].Type, "committed when Compact returns")
		assert.Equal(t, res.CoversTo, evs[len(evs)-1].Compaction.CoversTo)
		_, st, err := resident(t, l, sid)
		require.NoError(t, err)
		require.Len(t, st.History, 2, "the newest exchange stays")
		assert.Equal(t, "third", st.History[0].Content)
		assert.Contains(t, st.Summary, "summary 1")
		checkWindow(t, &st, 0)
		rep, err := ReadUsage(l.opts.Store, UsageQuery{})
		require.NoError(t, err)
		assert.Equal(t, 1000+5*(rep.Total.Calls-1), rep.Total.Input, "the summary call's tokens are in the ledger, with the turns' 5 each")

		_, err = l.Send(ctx, sid, Input{Content: "wait for me"})
		require.NoError(t, err)
		synctest.Wait()
		_, err = l.Compact(ctx, sid)
		assert.ErrorIs(t, err, ErrTurnRunning)
		once.Do(func() { close(gate) })
		synctest.Wait()

		onLoop(t, l, func() { l.record(l.sessions[sid], Event{Type: EvSessionEnd, Reason: "test"}) })
		_, err = l.Compact(ctx, sid)
		assert.ErrorIs(t, err, ErrSessionEnded)
	})
}

// A message sent while the summary is written starts its turn once the
// compaction is recorded, with the summary in its request.
func TestCompaction_TurnWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		asked, release := make(chan struct{}), make(chan struct{})
		var first sync.Once
		p := &scripted{answer: toolsOnAsk, summarize: func(*Request) (*Response, error) {
			first.Do(func() {
				close(asked)
				<-release
			})
			return say("the user likes milk"), nil
		}}
		l, _, _ := testLoop(t, t.TempDir(), compactAgent(p, 150))
		ctx := context.Background()
		info, err := l.CreateSession(ctx, NewSession{Agent: "assistant"})
		require.NoError(t, err)
		turnOf(t, l, info.ID, "first "+strings.Repeat("milk ", 40))
		turnOf(t, l, info.ID, "second "+strings.Repeat("milk ", 40))
		select {
		case <-asked:
		case <-time.After(time.Minute): // fake time: the bubble is idle
			t.Fatal("no summary call")
		}
		sub, err := l.Subscribe(ctx, info.ID)
		require.NoError(t, err)
		defer sub.Close()
		_, err = l.Send(ctx, info.ID, Input{Content: "third"})
		require.NoError(t, err)
		synctest.Wait()
		n := len(p.requests())
		assert.True(t, isSummaryCall(p.requests()[n-1]), "the turn waits for the summary")
		close(release)
		var types []EventType
		for e := range sub.C() {
			if e.Type != EvToken {
				types = append(types, e.Type)
			}
			if e.Type == EvTurnEnd {
				break
			}
		}
		assert.Equal(t, []EventType{EvUserMessage, EvHistoryCompaction, EvAssistant, EvTurnEnd}, types)
		var last *Request
		for _, r := range p.requests() {
			if !isSummaryCall(r) {
				last = r
			}
		}
		assert.Contains(t, last.System, summaryHeader+"the user likes milk")
		assert.Equal(t, "third", last.Messages[len(last.Messages)-1].Content)
	})
}

// What a chat is told of its /compact: the outcomes a person can act on
// have a sentence each; anything else is the gateway's failure to report.
func TestSayCompact(t *testing.T) {
	for err, want := range map[error]string{
		context.DeadlineExceeded: "being summarised",
		ErrTurnRunning:           "still answering",
		ErrSessionEnded:          "has ended",
		ErrSessionNotFound:       "has ended",
	} {
		say, ok := SayCompact(CompactResult{}, fmt.Errorf("wrapped: %w", err))
		assert.True(t, ok, "%v", err)
		assert.Contains(t, say, want)
	}
	say, ok := SayCompact(CompactResult{Method: CompactNone}, nil)
	assert.True(t, ok)
	assert.Contains(t, say, "Nothing to compact yet")
	_, ok = SayCompact(CompactResult{}, ErrClosed)
	assert.False(t, ok, "other errors are the gateway's to report")
}
