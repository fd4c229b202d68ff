package agents

import (
	"fmt"
	"strings"
)

// The defaults of spec.access, set by Load (and assumed for empty fields).
const (
	DefaultContextBufferMessages = 100
	DefaultContextBufferHours    = 24
	DefaultMaxPending            = 10
	DefaultDebounceMS            = 1500
)

// The values of spec.access.groups.sender_default and sender_overrides.
const (
	SenderAllow   = "allow"
	SenderPassive = "passive"
	SenderSilent  = "silent"
	SenderBlock   = "block"
)

// The values of spec.access.groups.queue.mode and .overflow.
const (
	QueueBatch      = "batch"
	QueueSequential = "sequential"
	QueueDrop       = "drop"
	OverflowDropOld = "drop_old"
	OverflowDropNew = "drop_new"
	OverflowReject  = "reject"
)

// DefaultAccess is spec.access when agent.yaml says nothing: everyone may
// talk to the agent; in groups it answers when mentioned.
func DefaultAccess() Access {
	return Access{
		DM: AccessRule{Policy: "open"},
		Groups: GroupAccess{
			Policy: "open", SenderDefault: SenderAllow, Activation: "mention",
			ContextBuffer: ContextBuffer{Mode: SenderSilent, MaxMessages: DefaultContextBufferMessages, MaxAgeHours: DefaultContextBufferHours},
			Queue:         DefaultQueue(),
		},
	}
}

// DefaultQueue is the queue of direct messages, and of groups unless
// spec.access.groups.queue says otherwise: batch, 10 pending, drop_old,
// debounce on with 1.5 s.
func DefaultQueue() Queue {
	return Queue{Mode: QueueBatch, MaxPending: DefaultMaxPending, Overflow: OverflowDropOld,
		Debounce: Debounce{Enabled: true, WindowMS: DefaultDebounceMS}}
}

// AccessError is a message an agent's access rules refuse; Why is one
// sentence saying so, for the person who sent it. Every gateway reports
// a refusal with it.
type AccessError struct{ Why string }

func (e *AccessError) Error() string { return e.Why }

// Admit is Admits as an error: nil, or an *AccessError.
func (a *Agent) Admit(in Inbound) error {
	if ok, why := a.Admits(in); !ok {
		return &AccessError{Why: why}
	}
	return nil
}

// Admits applies the chat-level part of spec.access, which gateways check
// before anything else (commands, sessions): a direct message follows
// access.dm (its allowlist matches the sender id), a group message
// access.groups (its allowlist matches "channel:chat_id"); a chat of
// another type is admitted. What a group member's message then does is
// Disposition's. When it refuses, why says so in one sentence.
func (a *Agent) Admits(in Inbound) (ok bool, why string) {
	switch {
	case in.Direct():
		dm := a.Access.DM
		if admitted(dm.Policy, dm.Allowlist, in.SenderID, in.channel()+":"+in.SenderID) {
			return true, ""
		}
		return false, fmt.Sprintf("agent %s does not take direct messages from %s:%s (spec.access.dm)", a.Name, in.channel(), in.SenderID)
	case in.Group():
		g := a.Access.Groups
		if admitted(g.Policy, g.Allowlist, in.channel()+":"+in.ChatID) {
			return true, ""
		}
		return false, fmt.Sprintf("agent %s does not take messages from the group %s:%s (spec.access.groups)", a.Name, in.channel(), in.ChatID)
	}
	return true, ""
}

func admitted(policy string, allow []string, ids ...string) bool {
	switch policy {
	case "", "open":
		return true
	case "disabled":
		return false
	}
	for _, p := range allow {
		for _, id := range ids {
			if matchID(p, id) {
				return true
			}
		}
	}
	return false
}

// matchID matches an allowlist or override pattern: exact, or "prefix*".
func matchID(pattern, id string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(id, p)
	}
	return pattern == id
}

// Disposition is what an admitted message does.
type Disposition int

// The dispositions, from Disposition.
const (
	// Reply: the message is the user's turn; the agent answers.
	Reply Disposition = iota
	// Passive: the message is stored in the conversation; no answer.
	Passive
	// Silent: the message is kept as a silent_message; the model sees it
	// only as recent group conversation when it is next addressed.
	Silent
	// Block: the message is dropped.
	Block
)

func (d Disposition) String() string {
	return [...]string{"reply", "passive", "silent", "block"}[d]
}

// Disposition says what an admitted message does. A direct message (or a
// chat that is neither) is a Reply. In a group the sender's disposition
// (sender_overrides, else sender_default) decides: block, silent and
// passive are Block, Silent and Passive; an allowed sender gets a Reply
// when activation is always or the message mentions or replies to the
// bot, else the message goes to the context buffer (Silent or Passive,
// per context_buffer.mode).
func (a *Agent) Disposition(in Inbound) Disposition {
	if !in.Group() {
		return Reply
	}
	g := a.Access.Groups
	switch a.SenderDisposition(in.SenderID) {
	case SenderBlock:
		return Block
	case SenderSilent:
		return Silent
	case SenderPassive:
		return Passive
	}
	if g.Activation == "always" || in.Mentioned {
		return Reply
	}
	if g.ContextBuffer.Mode == SenderPassive {
		return Passive
	}
	return Silent
}

// SenderDisposition is a group member's disposition: the exact entry of
// sender_overrides, else its longest matching "prefix*" entry, else
// sender_default (allow when empty).
func (a *Agent) SenderDisposition(sender string) string {
	g := a.Access.Groups
	if d, ok := g.SenderOverrides[sender]; ok {
		return d
	}
	best, bestLen := "", -1
	for p, d := range g.SenderOverrides {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(sender, prefix) && len(prefix) > bestLen {
			best, bestLen = d, len(prefix)
		}
	}
	if bestLen >= 0 {
		return best
	}
	if g.SenderDefault == "" {
		return SenderAllow
	}
	return g.SenderDefault
}

// QueueFor is the queue a chat's messages go through: spec.access.groups.
// queue for a group, DefaultQueue for any other chat. Empty fields take
// DefaultQueue's values (Load fills them all; an Agent built in code has
// no debounce in groups unless it says so).
func (a *Agent) QueueFor(in Inbound) Queue {
	d := DefaultQueue()
	if !in.Group() {
		return d
	}
	q := a.Access.Groups.Queue
	if q.Mode == "" {
		q.Mode = d.Mode
	}
	if q.MaxPending <= 0 {
		q.MaxPending = d.MaxPending
	}
	if q.Overflow == "" {
		q.Overflow = d.Overflow
	}
	if q.Debounce.Enabled && q.Debounce.WindowMS <= 0 {
		q.Debounce.WindowMS = d.Debounce.WindowMS
	}
	return q
}

// ContextBufferFor is the group context buffer's bounds, defaults filled.
func (a *Agent) ContextBufferFor() ContextBuffer {
	c := a.Access.Groups.ContextBuffer
	if c.Mode == "" {
		c.Mode = SenderSilent
	}
	if c.MaxMessages <= 0 {
		c.MaxMessages = DefaultContextBufferMessages
	}
	if c.MaxAgeHours <= 0 {
		c.MaxAgeHours = DefaultContextBufferHours
	}
	return c
}
