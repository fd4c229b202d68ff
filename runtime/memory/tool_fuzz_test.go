package memory

import (
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzTool_Args runs the tool on any arguments: it never panics, never
// fails with a Go error, and writes nothing outside its folders.
func FuzzTool_Args(f *testing.F) {
	for _, seed := range []string{
		`{"action":"recall"}`, `{"action":"recall","days":2,"query":"milk","limit":3}`,
		`{"action":"remember","content":"x"}`, `{"action":"reflect"}`, `{"action":"reflect","content":""}`,
		`{"action":"update_world","topic":"../../etc/passwd","content":"x"}`, `{"action":null}`, `{"days":-1}`,
		`{"action":"recall","days":1e309}`, `{"action":"recall","days":9223372036854775808}`, `{`, `null`, `"s"`, ``,
		"{\"action\":\"update_world\",\"topic\":\"\\u0000\",\"content\":\"\\ud800\"}",
	} {
		f.Add([]byte(seed))
	}
	agent, world := f.TempDir(), f.TempDir()
	tool := &Tool{Bank: NewBank(BankOptions{AgentDir: agent, WorldDir: world,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC) }})}
	f.Fuzz(func(t *testing.T, args []byte) {
		res, err := tool.Run(context.Background(), args)
		if err != nil {
			t.Fatalf("Run(%q) returned a Go error: %v", args, err)
		}
		if res.Content == "" {
			t.Fatalf("Run(%q) returned no text", args)
		}
	})
}

// FuzzSections splits any Markdown: each section's text is a piece of the
// document, in order, and no heading is lost.
func FuzzSections(f *testing.F) {
	for _, seed := range []string{"# 2026-11-20\n\n## 14:05\n\nx\n", "## a\n## b\n", "no heading", "", "##x\n## \n\n## y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		rest := doc
		for _, s := range sections(doc) {
			i := strings.Index(rest, s.text)
			if i < 0 {
				t.Fatalf("section %q is not in order in %q", s.text, doc)
			}
			rest = rest[i+len(s.text):]
			if s.heading != "" && !strings.HasPrefix(s.heading, "## ") && s.heading != "##" {
				t.Fatalf("heading %q", s.heading)
			}
		}
	})
}
