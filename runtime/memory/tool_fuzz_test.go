package memory

import (
	"context"
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
