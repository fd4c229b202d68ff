package workers

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzClaudeStream feeds claude's line parser any line: it never panics
// and what it keeps stays bounded.
func FuzzClaudeStream(f *testing.F) {
	b, err := os.ReadFile("testdata/claude_fake.sh")
	require.NoError(f, err)
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		// The printf lines of the fake are the real shapes, %s and all.
		if _, line, ok := strings.Cut(sc.Text(), "printf '"); ok {
			line, _, _ = strings.Cut(line, `\n'`)
			f.Add([]byte(line))
		}
	}
	f.Add([]byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"x","permission_denials":[{"tool_name":"Write","tool_input":{"file_path":"/a"}}]}`))
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}`))
	f.Add([]byte(`{"type":"result","permission_denials":[1,2,3],"result":7}`))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var said []string
		s := &claudeStream{say: func(l string) { said = append(said, l) }}
		for range 2 {
			_ = s.line(line)
		}
		assert.LessOrEqual(t, len(s.session), 200+len("…"))
		for _, l := range said {
			assert.LessOrEqual(t, len(l), maxProgressLine+len("…"))
		}
		if s.result != nil {
			assert.LessOrEqual(t, len(s.result.denials), maxDenials+1)
			assert.LessOrEqual(t, len(s.result.text), maxFinalText+100)
		}
	})
}

// FuzzCheckMessage: the ACP line guard never panics, and passes only
// what parses as a JSON object.
func FuzzCheckMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"a":` + "\n"))
	f.Add([]byte("   \n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		err := checkMessage(line)
		if err == nil && len(strings.TrimSpace(string(line))) > 0 {
			assert.Equal(t, byte('{'), strings.TrimSpace(string(line))[0])
		}
	})
}
