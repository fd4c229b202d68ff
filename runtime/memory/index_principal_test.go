package memory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// belongs sets the principal and parent of a session say made.
func (d *testDB) belongs(sid string, p agents.Principal, parent string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.sess {
		if d.sess[i].ID == sid {
			d.sess[i].Principal, d.sess[i].Parent = p, parent
		}
	}
}

// A search as a session finds the messages of only the sessions it sees
// (runtime.Viewer): its principal's and its subagents', never another
// person's, however well theirs match; the files are everyone's. When
// the best hits are hidden, it looks further down for visible ones.
func TestIndex_SearchAsAViewer(t *testing.T) {
	b := newFiles(t)
	b.write("MEMORY.md", "# Facts\n\nThe front door has a PIN pad.\n")
	db := openTestDB(t, filepath.Join(t.TempDir(), "agnx.db"))
	alice, bob := agents.TelegramPrincipal("111", false), agents.TelegramPrincipal("222", false)
	db.say("a1", "ada", "my door PIN is 4321", "noted: door PIN 4321")
	db.belongs("a1", alice, "")
	for _, s := range []string{"b1", "b2", "b3"} {
		db.say(s, "ada", "door PIN door PIN door PIN 9999", "door PIN 9999 door PIN")
		db.belongs(s, bob, "")
	}
	db.say("child", "ada", "look up the door PIN 5555")
	db.belongs("child", alice, "b1") // spawned by bob's b1, speaking for alice: b1 sees it as its own subagent
	x := newTestIndex(t, b, db, nil)

	find := func(v *runtime.Viewer, limit int) string {
		res, err := x.Search(context.Background(), Query{Text: "door PIN", Limit: limit, Viewer: v})
		require.NoError(t, err)
		var texts []string
		for _, h := range res.Hits {
			texts = append(texts, h.Source+": "+h.Text)
		}
		return strings.Join(texts, "\n")
	}
	all := find(nil, 20)
	assert.Contains(t, all, "4321", "no viewer (the owner's CLI and API) finds every session")
	assert.Contains(t, all, "9999")

	asAlice := &runtime.Viewer{Session: "a2", Agent: "ada", Principal: alice, Scope: agents.ScopePrincipal}
	got := find(asAlice, 20)
	assert.Contains(t, got, "4321")
	assert.Contains(t, got, "5555", "the subagent speaks for alice")
	assert.Contains(t, got, "memory/MEMORY.md", "files are every session's")
	assert.NotContains(t, got, "9999", "bob's sessions are not alice's")
	one := find(asAlice, 1)
	assert.NotContains(t, one, "9999", "bob's better matches are passed over")
	assert.NotEmpty(t, one)

	asHook := &runtime.Viewer{Session: "b1", Agent: "ada", Principal: agents.WebhookPrincipal("ci"), Scope: agents.ScopeSelf}
	got = find(asHook, 20)
	assert.Contains(t, got, "session b1:", "its own session")
	assert.Contains(t, got, "5555", "and its subagent's")
	assert.NotContains(t, got, "session b2:")
	assert.NotContains(t, got, "4321")

	assert.NotContains(t, find(&runtime.Viewer{}, 20), "session ", "the zero viewer sees no session")
}
