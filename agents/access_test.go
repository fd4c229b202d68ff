package agents

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdmits_ChatTypes(t *testing.T) {
	closed := &Agent{Name: "a", Access: Access{DM: AccessRule{Policy: "disabled"}, Groups: GroupAccess{Policy: "disabled"}}}
	for typ, ok := range map[string]bool{"": false, "dm": false, "DM": false, "Private": false,
		"group": false, "SUPERGROUP": false, "channel": false, "thread": true, "forum": true} {
		got, _ := closed.Admits(Inbound{Gateway: "wa", ChatType: typ, ChatID: "1", SenderID: "2"})
		assert.Equal(t, ok, got, "chat type %q", typ)
	}
}

func TestAdmits_DMAllowlist(t *testing.T) {
	a := &Agent{Name: "a", Access: Access{DM: AccessRule{Policy: "allowlist", Allowlist: []string{"42", "telegram:9", "admin-*"}}}}
	in := Inbound{Gateway: "telegram", ChatType: "private", ChatID: "5", SenderID: "5"}
	ok, why := a.Admits(in)
	assert.False(t, ok)
	assert.Equal(t, "agent a does not take direct messages from telegram:5 (spec.access.dm)", why)
	for _, sender := range []string{"42", "9", "admin-7"} {
		in.SenderID = sender
		ok, _ = a.Admits(in)
		assert.True(t, ok, "sender %s", sender)
	}
	in.SenderID = "420"
	assert.Error(t, a.Admit(in), "exact ids match exactly")
	var ae *AccessError
	assert.ErrorAs(t, a.Admit(in), &ae)
}

func TestAdmits_GroupAllowlistMatchesChannelAndChat(t *testing.T) {
	a := &Agent{Name: "a", Access: Access{Groups: GroupAccess{Policy: "allowlist", Allowlist: []string{"whatsapp:-100*", "telegram:-5"}}}}
	in := Inbound{Gateway: "wa", Channel: "whatsapp", ChatType: "group", ChatID: "-1001", SenderID: "7"}
	ok, _ := a.Admits(in)
	assert.True(t, ok, "the plugin's channel, not its gateway name, is matched")
	in.ChatID = "-5"
	ok, why := a.Admits(in)
	assert.False(t, ok)
	assert.Equal(t, "agent a does not take messages from the group whatsapp:-5 (spec.access.groups)", why)
	ok, _ = a.Admits(Inbound{Gateway: "telegram", ChatType: "supergroup", ChatID: "-5", SenderID: "1"})
	assert.True(t, ok, "no channel: the gateway's name")
	ok, _ = a.Admits(Inbound{Gateway: "telegram", ChatType: "supergroup", ChatID: "-6", SenderID: "-5"})
	assert.False(t, ok, "a group allowlist never matches the sender")
}

func TestDisposition(t *testing.T) {
	a := &Agent{Name: "a", Access: DefaultAccess()}
	a.Access.Groups.SenderOverrides = map[string]string{"bot-*": SenderBlock, "bot-friend*": SenderPassive,
		"bot-friend-1": SenderAllow, "lurker": SenderSilent}
	g := Inbound{Gateway: "telegram", ChatType: "group", ChatID: "-1", SenderID: "u"}
	assert.Equal(t, Silent, a.Disposition(g), "mention mode, not addressed: silent context buffer")
	g.Mentioned = true
	assert.Equal(t, Reply, a.Disposition(g))
	for sender, want := range map[string]Disposition{"bot-x": Block, "bot-friend-2": Passive, "bot-friend-1": Reply, "lurker": Silent} {
		g.SenderID = sender
		assert.Equal(t, want, a.Disposition(g), "sender %s (exact, then longest prefix)", sender)
	}
	g.SenderID, g.Mentioned = "u", false
	a.Access.Groups.ContextBuffer.Mode = SenderPassive
	assert.Equal(t, Passive, a.Disposition(g))
	a.Access.Groups.Activation = "always"
	assert.Equal(t, Reply, a.Disposition(g))
	a.Access.Groups.SenderDefault = SenderBlock
	assert.Equal(t, Block, a.Disposition(g))
	assert.Equal(t, Reply, a.Disposition(Inbound{Gateway: "telegram", ChatType: "private", SenderID: "lurker"}), "DMs always reply")
	assert.Equal(t, "block", Block.String())
}

func TestQueueFor(t *testing.T) {
	a := &Agent{Access: DefaultAccess()}
	a.Access.Groups.Queue = Queue{Mode: QueueDrop, MaxPending: 3, Overflow: OverflowReject, RejectMessage: "busy"}
	assert.Equal(t, DefaultQueue(), a.QueueFor(Inbound{ChatType: "private"}), "DMs use the default queue")
	assert.Equal(t, a.Access.Groups.Queue, a.QueueFor(Inbound{ChatType: "group"}))
	assert.True(t, DefaultQueue().Debounce.Enabled)
	empty := &Agent{}
	assert.Equal(t, Queue{Mode: QueueBatch, MaxPending: 10, Overflow: OverflowDropOld}, empty.QueueFor(Inbound{ChatType: "group"}))
	assert.Equal(t, ContextBuffer{Mode: SenderSilent, MaxMessages: 100, MaxAgeHours: 24}, empty.ContextBufferFor())
}

func loadWithAccess(t *testing.T, access string) (*Agent, error) {
	t.Helper()
	dir := t.TempDir()
	_, err := WriteTemplate(dir, "a")
	require.NoError(t, err)
	p := dir + "/a/agent.yaml"
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	body := strings.Replace(string(data), "  tools:", "  access:\n"+access+"  tools:", 1)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return Load(dir + "/a")
}

func TestLoad_AccessDefaultsAndFields(t *testing.T) {
	a, err := loadWithAccess(t, "    dm: {policy: open}\n")
	require.NoError(t, err)
	assert.Equal(t, DefaultAccess(), a.Access)

	a, err = loadWithAccess(t, `    groups:
      policy: allowlist
      allowlist: ["telegram:-100*"]
      sender_default: passive
      sender_overrides: {"42": allow}
      activation: always
      context_buffer: {mode: passive, max_messages: 5}
      queue: {mode: sequential, overflow: reject, reject_message: "wait", debounce: {window_ms: 300}}
`)
	require.NoError(t, err)
	g := a.Access.Groups
	assert.Equal(t, ContextBuffer{Mode: SenderPassive, MaxMessages: 5, MaxAgeHours: 24}, g.ContextBuffer)
	assert.Equal(t, Queue{Mode: QueueSequential, MaxPending: 10, Overflow: OverflowReject, RejectMessage: "wait",
		Debounce: Debounce{Enabled: true, WindowMS: 300}}, g.Queue)
	assert.Equal(t, map[string]string{"42": SenderAllow}, g.SenderOverrides)
	assert.Equal(t, SenderPassive, g.SenderDefault)
}

func TestLoad_AccessRefusals(t *testing.T) {
	long := strings.Repeat("x", 300)
	for access, want := range map[string]string{
		"    dm: {policy: maybe}\n":                                                      `spec.access.dm.policy "maybe" is not one of open, allowlist, disabled`,
		"    dm: {allowlist: [\"a*b\"]}\n":                                               `spec.access.dm.allowlist[0] "a*b" may have a "*" only at its end`,
		"    dm: {allowlist: [\"" + long + "\"]}\n":                                      `spec.access.dm.allowlist[0] must be 1 to 256 bytes long`,
		"    groups: {sender_default: mute}\n":                                           `spec.access.groups.sender_default "mute" is not one of allow, passive, silent, block`,
		"    groups: {sender_overrides: {\"1\": shout}}\n":                               `spec.access.groups.sender_overrides.1 "shout" is not one of`,
		"    groups: {activation: sometimes}\n":                                          `spec.access.groups.activation "sometimes" is not one of mention, always`,
		"    groups: {context_buffer: {mode: loud}}\n":                                   `spec.access.groups.context_buffer.mode "loud"`,
		"    groups: {context_buffer: {max_messages: 0}}\n":                              `spec.access.groups.context_buffer.max_messages 0 is out of range 1..200`,
		"    groups: {context_buffer: {max_age_hours: 9000}}\n":                          `spec.access.groups.context_buffer.max_age_hours 9000 is out of range 1..8760`,
		"    groups: {queue: {mode: lifo}}\n":                                            `spec.access.groups.queue.mode "lifo" is not one of batch, sequential, drop`,
		"    groups: {queue: {max_pending: 5000}}\n":                                     `spec.access.groups.queue.max_pending 5000 is out of range 1..1000`,
		"    groups: {queue: {overflow: explode}}\n":                                     `spec.access.groups.queue.overflow "explode" is not one of drop_old, drop_new, reject`,
		"    groups: {queue: {reject_message: \"" + strings.Repeat("y", 1001) + "\"}}\n": `reject_message is 1001 bytes long; shorten it to at most 1000`,
		"    groups: {queue: {debounce: {window_ms: -1}}}\n":                             `spec.access.groups.queue.debounce.window_ms -1 is out of range 0..60000`,
	} {
		_, err := loadWithAccess(t, access)
		assert.ErrorContains(t, err, want, access)
		if err != nil {
			assert.Regexp(t, `agent.yaml:\d+: `, err.Error())
		}
	}
}
