package runtime_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"a\nb\tc\r\x00\x1f", `"a\nb\tc\r\u0000\u001f"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"ls\u2028ps\u2029", `"ls\u2028ps\u2029"`},
		{"héllo 世界 🙂", `"héllo 世界 🙂"`},
		{"", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := runtime.AppendJSONString(nil, tt.in)
			assert.Equal(t, tt.want, string(got))
			var back string
			require.NoError(t, json.Unmarshal(got, &back))
			assert.Equal(t, strings.ToValidUTF8(tt.in, "\ufffd"), back)
		})
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello\n\"world\"\x00\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		b := runtime.AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("invalid JSON %q: %v", b, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip: %q != %q", back, s)
		}
	})
}
