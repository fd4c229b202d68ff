package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime/textcall"
)

// turn is the in-memory part of a running turn. The durable part (the
// messages, the open tool calls) lives in the session's state.
type turn struct {
	id     uint64
	ctx    context.Context
	cancel context.CancelFunc
	agent  *LoadedAgent
	calls  int // tool calls of the round without a result yet
	// final is set while the last model call runs, the one without tools
	// after max_tool_iterations rounds.
	final bool
	// pinned is the agent's name, pinned for the turn from its start;
	// agent is nil until the agent is built.
	pinned string
	// partial is the answer streamed so far in this round; a cancelled
	// turn keeps it, since the user saw it.
	partial strings.Builder
	usage   Usage
	started time.Time
	// pause asks the turn to stop at its next safe point: after the
	// current model or tool call, before the next one starts.
	pause bool
	// timers deny approvals nobody answers, by call id.
	timers map[string]*time.Timer
	// parked is set while the turn waits on something outside (a person's
	// decision) and holds no turn slot; next is what it does once it has
	// one again (see loop_park.go).
	parked bool
	next   []func()
	// steering are the after_tool hooks' messages of the round, recorded
	// with its last result (loop_hooks.go).
	steering []string
	// asks are the questions running calls put to a person (Ask), by
	// approval id; asked numbers them.
	asks  map[string]chan result[string]
	asked int
	// ceiling are the agents whose policies bound a subagent's calls
	// (subagent_policy.go); waiting its agent-tool waits.
	ceiling []*LoadedAgent
	waiting []*waiter
	// spawning counts spawns whose agent is being built; delivered are
	// the children whose answers a wait of this turn returned.
	spawning  int
	delivered map[string]bool
}

// schedule starts queued turns while the turn limit allows, then queued
// tool calls while the tool limit allows.
func (l *Loop) schedule() {
	l.unpark() // parked turns that can go on come first
	for !l.draining && l.running < l.opts.MaxTurns && len(l.waiting) > 0 {
		s := l.waiting[0]
		l.waiting[0] = nil
		l.waiting = l.waiting[1:]
		s.queued = false
		if l.sessions[s.st.ID] != s || s.turn != nil || !s.st.TurnActive || s.compacting != nil {
			continue // a compaction queues it again when it ends
		}
		l.startTurn(s)
	}
	l.runTools()
	if l.draining && l.running == 0 {
		for _, c := range l.drained {
			close(c)
		}
		l.drained = nil
	}
}

// startTurn takes a turn slot and starts the turn once its agent is
// built; until then the turn has no agent and waits (see withAgent).
func (l *Loop) startTurn(s *session) {
	l.running++
	l.turnSeq++
	name := s.st.Agent
	if p, ok := l.opts.Agents.(AgentPinner); ok {
		p.Pin(name) // before the look-up: what it finds stays open
	}
	ctx, cancel := context.WithCancel(l.runCtx)
	t := &turn{id: l.turnSeq, ctx: ctx, cancel: cancel, pinned: name, started: l.now()}
	s.turn = t
	l.withAgent(name, func(ag *LoadedAgent, err error) { l.runTurn(s, t, ag, err) })
}

// runTurn goes on with a turn whose agent is built, unless it ended (a
// cancel, a shutdown, its session dropped) while it was built.
func (l *Loop) runTurn(s *session, t *turn, ag *LoadedAgent, err error) {
	if l.sessions[s.st.ID] != s || s.turn != t {
		return
	}
	if err != nil {
		l.record(s, Event{Type: EvError, Code: "agent_unavailable", Content: err.Error()})
		l.endTurn(s, TurnFailed)
		return
	}
	t.agent = ag
	s.budget = historyBudget(ag)
	l.withCeiling(s, t, func() { l.goOn(s, t, ag) })
}

// goOn starts or resumes the turn once its agent and, for a subagent,
// its ceiling are loaded.
func (l *Loop) goOn(s *session, t *turn, ag *LoadedAgent) {
	if len(s.st.OpenCalls) == 0 && (l.refuseOverBudget(s, ag) || l.refuseSubagentTokens(s)) {
		return
	}
	if len(s.st.OpenCalls) > 0 {
		// A resumed turn stopped while tools ran: never run them again.
		l.resumeCalls(s)
		l.takeEarly(s, nil)
		return
	}
	l.callModel(s)
}

// endTurn closes the turn with a turn_end event. Messages that arrived
// during the turn start the next one.
func (l *Loop) endTurn(s *session, reason string) {
	var unreported []*session
	if len(s.st.Children) > 0 {
		unreported = l.unreported(s)
	}
	var usage Usage
	if t := s.turn; t != nil {
		if o := l.opts.Observer; o != nil {
			o.TurnEnded(s.st.Agent, reason, l.now().Sub(t.started), t.usage)
		}
		l.unpin(t)
		t.cancel()
		for _, tm := range t.timers {
			tm.Stop()
		}
		l.dropWaits(t)
		for _, reply := range t.asks {
			reply <- result[string]{err: fmt.Errorf("the turn ended (%s) before a person answered", reason)}
		}
		usage = t.usage
		l.release(t)
		s.turn = nil
	}
	origin, lastErr := s.st.Origin, s.st.LastError
	l.record(s, Event{Type: EvTurnEnd, Reason: reason, Usage: usage})
	l.heldDue = true
	l.turnEnded(s, reason, origin, lastErr)
	l.subagentChanged(s)
	for _, c := range unreported {
		if !s.st.Ended {
			l.report(s, c)
		}
	}
	l.takeEarly(s, nil) // the turn_end cleared its approvals: ErrNoApproval
}

func (l *Loop) unpin(t *turn) {
	if p, ok := l.opts.Agents.(AgentPinner); ok {
		p.Unpin(t.pinned)
	}
}

// callModel starts a worker for the next model call of the turn. The
// request shares the session's history: appends after this point land
// beyond the slice's capacity, so the worker never sees them.
//
// After max_tool_iterations answers in the turn (counted in the session's
// state, so across a restart too) the model gets one last call without
// tools, told to answer with what it has.
func (l *Loop) callModel(s *session) {
	t := s.turn
	spec := t.agent.Spec
	h := s.st.History
	system := withGroupContext(spec.RenderSystem(l.now()), s.st.groupContext(l.now(), spec.ContextBufferFor()))
	req := &Request{
		Model:           spec.Model.Name,
		System:          withSummary(system, s.st.Summary),
		Messages:        h[:len(h):len(h)],
		Temperature:     spec.Model.Temperature,
		MaxOutputTokens: spec.Model.MaxOutputTokens,
		ContextTokens:   spec.Model.MaxInputTokens,
		KeepAlive:       spec.Model.KeepAlive,
	}
	limit := maxIterations(t.agent)
	withTools := len(t.agent.Tools) > 0 && s.st.Rounds < limit
	t.final = len(t.agent.Tools) > 0 && !withTools
	if withTools {
		req.Tools = t.agent.toolSpecs()
	}
	if t.final {
		// Only in the request: the history keeps what was said. It copies
		// the history once, at the end of a turn that used all its rounds.
		req.Messages = append(req.Messages, Message{Role: RoleUser, Content: toolLimitHint(limit)})
	}
	w := streamWorker{l: l, sid: s.st.ID, turn: t.id, agent: t.agent, req: req, withTools: withTools, final: t.final,
		timeout: time.Duration(spec.Session.LLMTimeoutSeconds) * time.Second}
	l.wg.Add(1)
	go w.run(t.ctx)
}

func maxIterations(a *LoadedAgent) int {
	if n := a.Spec.Session.MaxToolIterations; n > 0 {
		return n
	}
	return agents.DefaultMaxToolIterations
}

// CodeToolLimit is the code of the error event a turn records when it
// reached its agent's max_tool_iterations: the model answered once more
// without tools, and the turn completed. It is a notice, not a failure.
const CodeToolLimit = "max_tool_iterations"

// toolLimitNotice is what the user is told when a turn used all its tool
// rounds.
func toolLimitNotice(n int) string {
	return fmt.Sprintf("this turn stopped using tools after %d rounds, so its answer may be incomplete: "+
		"raise spec.session.max_tool_iterations in the agent's agent.yaml (up to 100) to allow more", n)
}

// toolLimitHint is what the model is told in its last, tool-less call.
func toolLimitHint(n int) string {
	return fmt.Sprintf("[agnx-lite] The %d tool rounds this turn allows are used up and no tool can be called any more. "+
		"Answer the user now with what you have found so far, and say what is left undone.", n)
}

// streamWorker runs one model call. It owns nothing: it reads its
// request, posts deltas and posts the result back to the loop.
type streamWorker struct {
	l         *Loop
	sid       string
	turn      uint64
	agent     *LoadedAgent
	req       *Request
	withTools bool
	// final: the agent has tools but this last call offers none; text
	// calls the model writes anyway are cut from its answer.
	final   bool
	timeout time.Duration
}

func (w *streamWorker) run(ctx context.Context) {
	defer w.l.wg.Done()
	callCtx := ctx
	if w.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	filter := textcall.NewFilter(func(text string) {
		_ = w.l.post(ctx, &deltaReq{sid: w.sid, turn: w.turn, text: text})
	})
	start := time.Now()
	resp, err := w.agent.Provider.Stream(callCtx, w.req, func(d Delta) {
		if d.Text != "" {
			filter.Write(d.Text)
		}
	})
	if o := w.l.opts.Observer; o != nil && ctx.Err() == nil {
		o.ModelCalled(w.agent.Spec.Name, providerName(w.agent.Provider), time.Since(start), err)
	}
	switch {
	case err != nil:
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the model did not finish within %d seconds: raise spec.session.llm_timeout_seconds or use a smaller model",
				int(w.timeout/time.Second))
		}
	case (w.withTools || w.final) && len(resp.Message.ToolCalls) == 0:
		calls, rest := textcall.Extract(resp.Message.Content, w.agent.hasTool)
		if len(calls) == 0 {
			filter.Flush()
			break
		}
		filter.Discard()
		resp.Message.Content = rest // a final call's are dropped by streamDone
		for _, c := range calls {
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{Name: c.Name, Arguments: c.Arguments})
		}
	default:
		filter.Flush()
	}
	_ = w.l.post(context.Background(), &streamDone{sid: w.sid, turn: w.turn, resp: resp, err: err, withTools: w.withTools})
}

type deltaReq struct {
	sid  string
	turn uint64
	text string
}

func (r *deltaReq) handle(l *Loop) {
	if s := l.sessions[r.sid]; s != nil && s.turn != nil && s.turn.id == r.turn {
		s.turn.partial.WriteString(r.text)
		s.publish(Event{Type: EvToken, Content: r.text})
	}
}

type streamDone struct {
	sid       string
	turn      uint64
	resp      *Response
	err       error
	withTools bool // the request offered tools
}

func (r *streamDone) handle(l *Loop) {
	s := l.sessions[r.sid]
	if s == nil || s.turn == nil || s.turn.id != r.turn {
		return // the turn was cancelled or the session dropped
	}
	t := s.turn
	if r.err != nil && l.runCtx.Err() != nil {
		return // shutting down: Run marks or keeps the turn, per its agent
	}
	t.partial.Reset()
	if r.err != nil {
		if t.ctx.Err() != nil {
			l.endTurn(s, TurnCancelled)
			return
		}
		code, msg := describe(r.err)
		l.log.Warn("model call failed", "session", r.sid, "agent", s.st.Agent, "code", code, "err", r.err)
		l.record(s, Event{Type: EvError, Code: code, Content: msg})
		l.endTurn(s, TurnFailed)
		return
	}
	msg := r.resp.Message
	if !r.withTools {
		msg.ToolCalls = nil // calls of tools it was not offered are not run
	}
	calls := msg.ToolCalls
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = "call_" + strconv.FormatUint(s.st.LastSeq+1, 10) + "_" + strconv.Itoa(i)
		}
	}
	l.record(s, Event{Type: EvAssistant, Agent: s.st.Agent, Content: msg.Content, ToolCalls: calls,
		Thinking: msg.Thinking, Usage: r.resp.Usage})
	l.noteUsage(s, t.agent, r.resp.Usage)
	t.usage = t.usage.Add(r.resp.Usage)
	if len(calls) == 0 {
		if t.final {
			l.record(s, Event{Type: EvError, Code: CodeToolLimit, Content: toolLimitNotice(maxIterations(t.agent))})
		}
		l.endTurn(s, TurnCompleted)
		return
	}
	if t.pause {
		l.endTurn(s, TurnPaused)
		return
	}
	for _, c := range calls {
		l.record(s, Event{Type: EvToolCall, CallID: c.ID, ToolName: c.Name, Arguments: c.Arguments})
	}
	l.afterCommit(func(err error) {
		if err == nil && s.turn == t {
			l.startTools(s, calls)
		}
	})
}

// describe turns a model failure into an event code and the sentence the
// user sees.
func describe(err error) (code, msg string) {
	var pe *ProviderError
	if errors.As(err, &pe) {
		codes := [...]string{
			ErrUnknown: "provider_error", ErrUnreachable: "provider_unreachable",
			ErrModelNotFound: "model_not_found", ErrAuth: "provider_auth",
			ErrRateLimited: "rate_limited", ErrServer: "provider_error",
			ErrBadRequest: "provider_rejected", ErrBadResponse: "bad_response",
			ErrTimeout: "timeout", ErrInterrupted: "stream_interrupted",
		}
		code = "provider_error"
		if int(pe.Kind) < len(codes) {
			code = codes[pe.Kind]
		}
		return code, pe.Error()
	}
	return "internal_error", err.Error()
}
