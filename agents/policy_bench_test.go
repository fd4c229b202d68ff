package agents

import "testing"

// BenchmarkDecide is one tool call through a policy of a dozen rules:
// Decide then Notifies, and Check, as the event loop asks.
func BenchmarkDecide(b *testing.B) {
	p := mustPolicy(b, "ask",
		[]string{"bash:rm -rf *", "bash:git push*", "bash:sudo *", "bash:curl * | sh", "read_file:secret*", "write_file:.git/*"},
		[]string{"bash:git *", "bash:ls*", "bash:cat *", "bash:go test *", "read_file", "list_dir"})
	for _, s := range []string{"bash:sudo *", "write_file:*.env"} {
		r, err := ParseRule(s)
		if err != nil {
			b.Fatal(err)
		}
		p.Notify.Patterns = append(p.Notify.Patterns, r)
	}
	p.Notify.Enabled = true
	calls := []struct{ name, tool, subject string }{
		{"bash", "bash", "git status && ls -la | cat -n; go test ./..."},
		{"path", "read_file", "./src/../notes/todo.md"},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Decide(c.tool, c.subject)
				p.Notifies(c.tool, c.subject)
			}
		})
		b.Run(c.name+"/check", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Check(c.tool, c.subject)
			}
		})
	}
}
