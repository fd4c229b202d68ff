package jsonw_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"a\nb\tc\r\x00\x1f\x7f", `"a\nb\tc\r\u0000\u001f` + "\x7f" + `"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"cut \xe4\xb8", `"cut \ufffd\ufffd"`},
		{"ls\u2028ps\u2029", `"ls\u2028ps\u2029"`},
		{"<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"héllo 世界 🙂", `"héllo 世界 🙂"`},
		{"", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := jsonw.AppendString([]byte("x"), tt.in)
			assert.Equal(t, "x"+tt.want, string(got), "appended after what dst held")
			var back string
			require.NoError(t, json.Unmarshal(got[1:], &back))
			assert.Equal(t, toValid(tt.in), back)
		})
	}
}

// Matches encoding/json byte for byte except for HTML characters, which
// encoding/json escapes and jsonw does not.
func TestAppendString_LikeEncodingJSON(t *testing.T) {
	for _, s := range []string{"plain", "a\"b\\c\n\r\t", "\x00\x01\x1f", "ls\u2028ps\u2029", "bad\xffx", "世界🙂"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(jsonw.AppendString(nil, s)), "%q", s)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello\n\"world\"\x00\xff\u2028")
	f.Add("<&>\u2029\r\n\t\\")
	f.Add("\xed\xa0\x80 surrogate half")
	f.Fuzz(func(t *testing.T, s string) {
		b := jsonw.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("invalid JSON %q: %v", b, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip: %q != %q", back, s)
		}
		if !utf8.ValidString(s) && back != strings.ToValidUTF8(back, "\ufffd") {
			t.Fatalf("invalid UTF-8 came back: %q", back)
		}
		for _, c := range b {
			if c < 0x20 {
				t.Fatalf("raw control byte %#x in %q", c, b)
			}
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) + "\"quoted\"\n"
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = jsonw.AppendString(buf[:0], s)
	}
}
