package telegram_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/lite/telegram"
	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

func TestReply_LongSplitOnParagraphs(t *testing.T) {
	r := newRig(t, nil)
	para := strings.Repeat("lorem ipsum dolor ", 100) // 1800
	text := strings.TrimSpace(strings.Repeat(para+"\n\n", 4))
	r.say(text)
	r.waitIdle("42")
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	r.tg.Wait(t, "the whole reply", func() bool {
		return squash(strings.Join(r.tg.Texts(owner), "")) == squash("echo: "+text)
	})
	msgs := r.tg.Texts(owner)
	require.Len(t, msgs, 2, "two paragraphs (3,600 characters) per message")
	for _, m := range msgs {
		assert.LessOrEqual(t, len(utf16.Encode([]rune(m))), telegram.MaxMessage)
		assert.True(t, strings.HasSuffix(m, "dolor"), "cut between paragraphs")
	}
}

func TestReply_BadEntitiesFallBackToPlain(t *testing.T) {
	r := newRig(t, nil)
	html := func(c tgtest.Call) bool { return c.Str("parse_mode") == "HTML" }
	r.tg.Fail("sendMessage", tgtest.Fault{When: html, Code: 400, Description: tgtest.BadEntities.Description})
	r.tg.Fail("editMessageText", tgtest.Fault{When: html, Code: 400, Description: tgtest.BadEntities.Description})
	r.say("**bold** move")
	r.waitIdle("42")
	m := r.waitText(owner, "echo: **bold** move")
	assert.Equal(t, "", m.ParseMode, "the same text, as plain text")
	var plain int
	for _, c := range r.tg.Calls("sendMessage", "editMessageText") {
		if c.Str("parse_mode") == "" && strings.Contains(c.Str("text"), "**bold**") {
			plain++
		}
	}
	assert.GreaterOrEqual(t, plain, 1)
	assert.Len(t, r.tg.Chat(owner), 1, "no second message")
}

func TestReply_HTMLFormatting(t *testing.T) {
	r := newRig(t, nil)
	r.say("see `a<b>` and **this**")
	r.waitIdle("42")
	m := r.waitText(owner, "echo: see a<b> and this")
	assert.Equal(t, "echo: see <code>a&lt;b&gt;</code> and <b>this</b>", m.Text)
}

func TestReply_ApprovalButtons(t *testing.T) {
	r := newRig(t, nil)
	writeFile(t, filepath.Join(r.cfg.AgentsDir, "assistant", "policy.yaml"), "apiVersion: agnx/v1alpha1\nkind: Policy\nmode: ask\n")
	writeFile(t, filepath.Join(r.cfg.WorkspaceDir("assistant"), "notes.txt"), "hi")
	r.say("use list_dir {}")
	ask := r.waitContains(owner, "The agent wants to use list_dir")
	require.Len(t, ask.Keyboard, 3)
	assert.True(t, strings.HasPrefix(ask.Keyboard[0], "ap:o:"), ask.Keyboard[0])
	for _, d := range ask.Keyboard {
		assert.LessOrEqual(t, len(d), 64)
	}
	press := tgtest.Press(owner, &ask, ask.Keyboard[0])
	id := press["callback_query"].(map[string]any)["id"].(string)
	r.tg.Queue(press)
	r.waitContains(owner, "list_dir said:")
	r.tg.Wait(t, "the press to be answered", func() bool { _, ok := r.tg.Answered(id); return ok })
	text, _ := r.tg.Answered(id)
	assert.Equal(t, "Allowed once", text)
	edited := r.waitContains(owner, "Allowed once")
	assert.Nil(t, edited.Keyboard, "the buttons are gone")
	assert.Contains(t, r.waitContains(owner, "list_dir said:").Plain(), "notes.txt")
}

func TestReply_StrangerCannotApprove(t *testing.T) {
	r := newRig(t, nil)
	writeFile(t, filepath.Join(r.cfg.AgentsDir, "assistant", "policy.yaml"), "mode: ask\n")
	r.say("use list_dir {}")
	ask := r.waitContains(owner, "The agent wants to use list_dir")
	press := tgtest.Press(77, &ask, ask.Keyboard[2])
	id := press["callback_query"].(map[string]any)["id"].(string)
	r.tg.Queue(press)
	r.tg.Wait(t, "the press to be answered", func() bool { _, ok := r.tg.Answered(id); return ok })
	text, _ := r.tg.Answered(id)
	assert.Contains(t, text, "not allowed")
	r.tg.Queue(tgtest.Press(owner, &ask, ask.Keyboard[2]))
	r.waitContains(owner, "Denied")
}

func TestReply_PhotoSavedAndAnnounced(t *testing.T) {
	r := newRig(t, nil)
	jpeg := []byte("\xff\xd8\xff\xe0 fake jpeg")
	r.tg.AddFile("ph-big", "photos/file_7.jpg", jpeg)
	u := tgtest.Private(owner, "")
	m := tgtest.Msg(u)
	delete(m, "text")
	m["message_id"] = 321
	m["caption"] = "what is this?"
	m["photo"] = []any{
		map[string]any{"file_id": "ph-small", "file_unique_id": "s", "width": 90, "height": 60, "file_size": 100},
		map[string]any{"file_id": "ph-big", "file_unique_id": "b", "width": 1280, "height": 853, "file_size": len(jpeg)},
	}
	r.tg.Queue(u)
	want := "[the user sent a photo, saved as inbox/photo-321.jpg]\nwhat is this?"
	r.waitText(owner, "echo: "+want)
	got, err := os.ReadFile(filepath.Join(r.cfg.WorkspaceDir("assistant"), "inbox", "photo-321.jpg"))
	require.NoError(t, err)
	assert.Equal(t, jpeg, got)
	assert.Equal(t, []string{want}, r.userMessages("42"))
}

func TestReply_DocumentSafeNameAndCap(t *testing.T) {
	r := newRig(t, nil, func(_ *config.Config, o *telegram.Options) { o.MaxFileBytes = 10 })
	r.tg.AddFile("doc", "documents/file_1", []byte("0123456789"))
	u := tgtest.Private(owner, "")
	m := tgtest.Msg(u)
	delete(m, "text")
	m["message_id"] = 5
	m["document"] = map[string]any{"file_id": "doc", "file_unique_id": "d", "file_name": "../../etc/pass wd.txt", "file_size": 10}
	r.tg.Queue(u)
	r.waitText(owner, "echo: [the user sent a document (../../etc/pass wd.txt), saved as inbox/5-pass_wd.txt]")
	assert.FileExists(t, filepath.Join(r.cfg.WorkspaceDir("assistant"), "inbox", "5-pass_wd.txt"))

	r.tg.AddFile("big", "documents/file_2", []byte("0123456789ABC"))
	u = tgtest.Private(owner, "")
	m = tgtest.Msg(u)
	delete(m, "text")
	m["document"] = map[string]any{"file_id": "big", "file_unique_id": "b", "file_name": "big.bin", "file_size": 13}
	r.tg.Queue(u)
	r.waitContains(owner, "Sorry, I could not take that file")
	r.waitConsumed()
	assert.Len(t, r.userMessages("42"), 1, "the refused file does not reach the agent")
}
