package runtime_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm/llmtest"
	"github.com/agnx-lite/agnx-lite/storage"
)

// A session's principal is stored with it: its record, its session_start
// and its checkpoints keep it across a restart and later turns.
func TestPrincipal_Durable(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	ctx := context.Background()
	bob := agents.OpenAIPrincipal("bob")
	info, err := h.loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "openai", ChatID: "assistant:bob", Principal: bob})
	require.NoError(t, err)
	assert.Equal(t, bob, info.Principal)
	h.turn(info.ID, "hello")

	h.restart()
	got, err := h.loop.Session(ctx, info.ID)
	require.NoError(t, err)
	assert.Equal(t, bob, got.Principal)
	h.turn(info.ID, "again") // loaded from its checkpoint, then committed anew
	got, err = h.loop.Session(ctx, info.ID)
	require.NoError(t, err)
	assert.Equal(t, bob, got.Principal)
	start := h.durable(info.ID)[0]
	assert.Equal(t, runtime.EvSessionStart, start.Type)
	assert.Equal(t, bob, start.Principal)
	assert.Contains(t, string(start.AppendJSON(nil)), `"principal":"openai:`)
	ref, ok := h.loop.SessionRef(info.ID)
	require.True(t, ok)
	assert.Equal(t, bob, ref.Principal)
}

// Sessions stored before principals existed get the one their record
// implies when they are read and when they are loaded: the owner's for an
// API or CLI session, a chat's for a gateway's, the parent session's for
// a subagent's. Once loaded and committed, it is stored.
func TestPrincipal_SessionsFromBefore(t *testing.T) {
	h := newHarness(t, llmtest.Echo())
	h.close()
	st, err := storage.Open(filepath.Join(h.dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	old := func(id, gateway, chat, spawn string) {
		meta := `{"session_id":"` + id + `","agent":"assistant","gateway":"` + gateway + `","chat_id":"` + chat +
			`","status":"active","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","turns":0,"last_seq":1` + spawn + `}`
		start := `{"seq":1,"timestamp":"2026-01-01T00:00:00Z","type":"session_start","agent":"assistant","gateway":"` + gateway +
			`","gateway_chat_id":"` + chat + `"}`
		if spawn != "" {
			start = `{"seq":1,"timestamp":"2026-01-01T00:00:00Z","type":"session_start","agent":"assistant","gateway":"agent",` +
				`"gateway_chat_id":"` + chat + `","spawn":{"parent_id":"` + chat + `","call_id":"c1","depth":1,"ceiling":["assistant"]}}`
		}
		require.NoError(t, st.Update(func(tx *storage.Tx) error {
			if err := tx.CreateSession(id, []byte(meta)); err != nil {
				return err
			}
			return tx.AppendEvent(id, 1, []byte(start))
		}))
	}
	old("session_01OLDHTTP", "http", "", "")
	old("session_01OLDTG", "telegram", "42", "")
	old("session_01OLDGROUP", "telegram", "-100777", "")
	old("session_01OLDKID", "agent", "session_01OLDTG", `,"parent_id":"session_01OLDTG"`)
	require.NoError(t, st.Close())
	h.start()

	want := map[string]string{
		"session_01OLDHTTP":  "owner",
		"session_01OLDTG":    "telegram:user:42",
		"session_01OLDGROUP": "telegram:group:-100777",
		"session_01OLDKID":   "session:session_01OLDTG",
	}
	list, err := h.loop.Sessions(context.Background())
	require.NoError(t, err)
	require.Len(t, list, len(want))
	for _, s := range list {
		assert.Equal(t, want[s.ID], s.Principal.String(), s.ID)
	}
	h.turn("session_01OLDTG", "hello") // loaded, then committed
	info, err := h.loop.Session(context.Background(), "session_01OLDTG")
	require.NoError(t, err)
	assert.Equal(t, "telegram:user:42", info.Principal.String())
	require.NoError(t, h.store.View(func(tx *storage.Tx) error {
		meta, err := tx.Meta("session_01OLDTG")
		assert.Contains(t, string(meta), `"principal":"telegram:user:42"`, "stored now")
		return err
	}))
}

// A subagent speaks for whom its parent's turn speaks for.
func TestPrincipal_SubagentInherits(t *testing.T) {
	h := newHarness(t, func(r llmtest.RecordedRequest) llmtest.Reply {
		if r.LastUser() == "spawn" && r.Messages[len(r.Messages)-1].Role == "user" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: `{"action":"spawn","task":"look"}`}}}
		}
		return llmtest.Reply{Text: "ok"}
	})
	h.agent.Tools = append(h.agent.Tools, runtime.AgentTool{})
	carol := agents.TelegramPrincipal("333", false)
	info, err := h.loop.CreateSession(context.Background(), runtime.NewSession{Agent: "assistant", Gateway: "telegram", ChatID: "333", Principal: carol})
	require.NoError(t, err)
	h.turn(info.ID, "spawn")
	list, err := h.loop.Sessions(context.Background())
	require.NoError(t, err)
	var kids []runtime.SessionInfo
	for _, s := range list {
		if s.Parent == info.ID {
			kids = append(kids, s)
		}
	}
	require.Len(t, kids, 1)
	assert.Equal(t, carol, kids[0].Principal)

	// A turn a webhook's message started in carol's chat spawns a child
	// that speaks for the webhook, not for carol.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err = h.loop.CreateSession(ctx, runtime.NewSession{Agent: "assistant", Gateway: "telegram", ChatID: "333", Principal: carol})
	require.NoError(t, err)
	sub, err := h.loop.Subscribe(ctx, info.ID)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.loop.Send(ctx, info.ID, runtime.Input{Content: "spawn", Origin: runtime.OriginWebhook("gh")})
	require.NoError(t, err)
	collect(ctx, t, sub) // the spawn is committed in the turn
	list, err = h.loop.Sessions(context.Background())
	require.NoError(t, err)
	kids = kids[:0]
	for _, s := range list {
		if s.Parent == info.ID {
			kids = append(kids, s)
		}
	}
	require.Len(t, kids, 1)
	assert.Equal(t, agents.WebhookPrincipal("gh"), kids[0].Principal)
}

// Viewer.Sees is the one rule every reader of other sessions applies.
func TestViewer_Sees(t *testing.T) {
	alice, bob := agents.TelegramPrincipal("1", false), agents.TelegramPrincipal("2", false)
	hook := agents.WebhookPrincipal("gh")
	refs := map[string]runtime.SessionRef{
		"a1":    {ID: "a1", Agent: "x", Principal: alice},
		"a2":    {ID: "a2", Agent: "x", Principal: alice},
		"b1":    {ID: "b1", Agent: "x", Principal: bob},
		"other": {ID: "other", Agent: "y", Principal: alice},
		"h1":    {ID: "h1", Agent: "x", Principal: hook},
		"kid":   {ID: "kid", Agent: "x", Parent: "h1", Principal: hook},
		"grand": {ID: "grand", Agent: "x", Parent: "kid", Principal: hook},
		"h2":    {ID: "h2", Agent: "x", Principal: hook},
	}
	lookup := func(id string) (runtime.SessionRef, bool) { r, ok := refs[id]; return r, ok }
	sees := func(v runtime.Viewer) []string {
		var out []string
		for _, id := range []string{"a1", "a2", "b1", "other", "h1", "kid", "grand", "h2"} {
			if v.Sees(refs[id], lookup) {
				out = append(out, id)
			}
		}
		return out
	}
	asAlice := runtime.Viewer{Session: "a1", Agent: "x", Principal: alice, Scope: agents.ScopePrincipal}
	assert.Equal(t, []string{"a1", "a2"}, sees(asAlice), "her own, never another agent's")
	asAlice.Scope = agents.ScopeSelf
	assert.Equal(t, []string{"a1"}, sees(asAlice))
	asAlice.Scope = agents.ScopeAgent
	assert.Equal(t, []string{"a1", "a2", "b1", "h1", "kid", "grand", "h2"}, sees(asAlice), "Agnx's: every session of the agent")
	linked := runtime.Viewer{Session: "a1", Agent: "x", Principal: alice, Scope: agents.ScopePrincipal,
		Access: agents.SessionAccess{Linked: []agents.Principal{alice, bob}}}
	assert.Equal(t, []string{"a1", "a2", "b1"}, sees(linked), "linked principals are one person")
	asHook := runtime.Viewer{Session: "h1", Agent: "x", Principal: hook, Scope: agents.ScopeSelf}
	assert.Equal(t, []string{"h1", "kid", "grand"}, sees(asHook), "itself and its subagents, not the hook's other session")
	assert.Empty(t, sees(runtime.Viewer{}), "the zero viewer sees nothing")
}
