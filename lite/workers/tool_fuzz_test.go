package workers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzWorkerArgs: whatever the model sends, ParseArgs answers with args
// that name a known action and carry what it needs, or one sentence;
// Subject and Deadline never panic.
func FuzzWorkerArgs(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "tool_args", "*.json"))
	require.NoError(f, err)
	require.NotEmpty(f, files)
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	s := New(Options{Entries: map[string]Entry{"coder": {RunTimeout: DefaultTimeout}}, Runners: map[string]Runner{"coder": nil}})
	tl := s.Tool("/ws").(*tool)
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := ParseArgs(raw)
		_ = tl.Subject(raw)
		if d := tl.Deadline(raw); d < 0 {
			t.Fatalf("negative deadline %v", d)
		}
		if err != nil {
			if msg := err.Error(); strings.ContainsRune(msg, '\n') || len(msg) > 400 {
				t.Fatalf("not one short sentence: %q", msg)
			}
			return
		}
		switch a.Action {
		case "run":
			if a.Worker == "" || a.Task == "" {
				t.Fatalf("run without worker or task: %+v", a)
			}
		case "approve", "status", "reject":
			if a.Job == "" {
				t.Fatalf("%s without job", a.Action)
			}
		case "list":
		default:
			t.Fatalf("unknown action accepted: %q", a.Action)
		}
	})
}

// FuzzLineEdits: the edits of a into b keep a's lines in order (with the
// removed ones) and give b's (with the added ones).
func FuzzLineEdits(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nx\nc\n")
	f.Add("", "new\n")
	f.Add("one\ntwo", "two\none")
	f.Fuzz(func(t *testing.T, a, b string) {
		la, lb := splitLines([]byte(a)), splitLines([]byte(b))
		var gotA, gotB []string
		for _, e := range lineEdits(la, lb) {
			if e.op != '+' {
				gotA = append(gotA, e.line)
			}
			if e.op != '-' {
				gotB = append(gotB, e.line)
			}
		}
		require.Equal(t, strings.Join(la, ""), strings.Join(gotA, ""))
		require.Equal(t, strings.Join(lb, ""), strings.Join(gotB, ""))
		var w strings.Builder
		writeHunks(&w, la, lb) // must not panic
	})
}
