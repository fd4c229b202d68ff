package telegram

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

func seeds(f *testing.F, glob string) {
	files, _ := filepath.Glob(filepath.Join("testdata", glob))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
}

// FuzzUpdate: any getUpdates result parses or fails cleanly, and what the
// gateway derives from an update never panics.
func FuzzUpdate(f *testing.F) {
	seeds(f, "update*.json")
	g := &poller{me: User{ID: 999, Username: "agnx_test_bot"}}
	f.Fuzz(func(t *testing.T, data string) {
		ups, err := ParseUpdates([]byte(data))
		if err != nil {
			return
		}
		for _, u := range ups {
			if m := u.Message; m != nil {
				g.inbound(m)
				g.command(m.Text)
				safeName(m.Caption)
			}
			if q := u.CallbackQuery; q != nil {
				parseCallbackData(q.Data)
			}
		}
	})
}

// FuzzMarkdownHTML: whatever a model writes renders to HTML Telegram
// accepts, and each piece of the split stays within the limit.
func FuzzMarkdownHTML(f *testing.F) {
	seeds(f, "*.md")
	f.Add("**a** _b_ `c` [d](https://e) ```go\nf\n```")
	f.Fuzz(func(t *testing.T, md string) {
		out := HTML(md)
		if err := tgtest.ValidateHTML(out); err != nil {
			t.Fatalf("invalid HTML %q from %q: %v", out, md, err)
		}
		for _, p := range Split(md, 200) {
			if textLen(p) > 200 {
				t.Fatalf("piece of %d units", textLen(p))
			}
			if err := tgtest.ValidateHTML(HTML(p)); err != nil {
				t.Fatalf("invalid HTML for piece %q: %v", p, err)
			}
			if textLen(tgtest.PlainHTML(HTML(p))) > 200 && !strings.Contains(p, "\uFFFD") {
				t.Fatalf("rendered piece longer than its source")
			}
		}
	})
}
