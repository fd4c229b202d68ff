package httpapi

import (
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The new message is the user messages after the last assistant message;
// system messages are skipped.
func TestParseChatRequest_Tail(t *testing.T) {
	for _, c := range []struct{ name, body, input, param string }{
		{"one", `{"model":"a","messages":[{"role":"user","content":"hi"}]}`, "hi", ""},
		{"history", `{"model":"a","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"},
			{"role":"assistant","content":"yo"},{"role":"user","content":"x"},{"role":"system","content":"s2"},{"role":"user","content":"y"}]}`, "x\n\ny", ""},
		{"parts", `{"model":"a","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`, "a\nb", ""},
		{"ends with assistant", `{"model":"a","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`, "", "messages"},
		{"tool tail", `{"model":"a","messages":[{"role":"assistant","content":null},{"role":"tool","content":"r"}]}`, "", "messages"},
		{"image", `{"model":"a","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, "", "messages"},
		{"bad role", `{"model":"a","messages":[{"role":"wizard","content":"hi"}]}`, "", "messages"},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, "", "model"},
		{"bad model", `{"model":"../x","messages":[{"role":"user","content":"hi"}]}`, "", "model"},
		{"bad user", `{"model":"a","user":"a\nb","messages":[{"role":"user","content":"hi"}]}`, "", "user"},
		{"no messages", `{"model":"a"}`, "", "messages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			turn, bad := parseChatRequest([]byte(c.body))
			if c.param != "" {
				require.NotNil(t, bad)
				assert.Equal(t, c.param, bad.param)
				assert.Equal(t, http.StatusBadRequest, bad.status)
				return
			}
			require.Nil(t, bad)
			assert.Equal(t, c.input, turn.input)
			assert.Equal(t, "a", turn.agent)
		})
	}
}

// FuzzParseChatRequest: any body is a turn with a valid agent name and a
// non-empty message, or a 400 with a sentence; never a panic.
func FuzzParseChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"assistant","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"a","messages":[{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"t"}]}],"user":"u"}`,
		`{"model":"a","messages":[{"role":"tool","content":"r"}]}`,
		`{"model":5}`, `[]`, `null`, ``, `{"messages":[null]}`, "{\"model\":\"a\",\"messages\":[{\"role\":\"\xff\"}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		turn, bad := parseChatRequest(data)
		if bad != nil {
			assert.NotEmpty(t, bad.msg)
			assert.Equal(t, http.StatusBadRequest, bad.status)
			assert.True(t, utf8.ValidString(bad.param))
			return
		}
		assert.True(t, validAgentName(turn.agent))
		assert.True(t, validChatID(turn.user))
		assert.NotEmpty(t, turn.input)
	})
}
