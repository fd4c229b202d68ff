package plugin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncode(t *testing.T) {
	tests := []struct {
		c    Command
		want string
	}{
		{SendMessage{RequestID: "r1", ChatID: "c", Content: "hi"},
			`{"type":"send_message","request_id":"r1","chat_id":"c","content":"hi"}`},
		{SendMessage{RequestID: "r2", ChatID: "c", Content: "ok?", ReplyTo: "m1",
			InlineKeyboard: &InlineKeyboard{Rows: [][]Button{{{Text: "Yes", CallbackData: "y"}}}}},
			`{"type":"send_message","request_id":"r2","chat_id":"c","content":"ok?","reply_to":"m1","inline_keyboard":{"rows":[[{"text":"Yes","callback_data":"y"}]]}}`},
		{SendMedia{RequestID: "r3", ChatID: "c", Media: Media{Source: "url", URL: "http://x"}},
			`{"type":"send_media","request_id":"r3","chat_id":"c","media":{"source":"url","url":"http://x"}}`},
		{SendTyping{ChatID: "c", Duration: 5}, `{"type":"send_typing","chat_id":"c","duration":5}`},
		{EditMessage{RequestID: "r4", ChatID: "c", MessageID: "m", Content: "x"},
			`{"type":"edit_message","request_id":"r4","chat_id":"c","message_id":"m","content":"x"}`},
		{DeleteMessage{RequestID: "r5", ChatID: "c", MessageID: "m"},
			`{"type":"delete_message","request_id":"r5","chat_id":"c","message_id":"m"}`},
		{Ping{RequestID: "r6"}, `{"type":"ping","request_id":"r6"}`},
		{AnswerCallbackQuery{RequestID: "r7", CallbackQueryID: "q"},
			`{"type":"answer_callback_query","request_id":"r7","callback_query_id":"q"}`},
		{Shutdown{}, `{"type":"shutdown"}`},
	}
	for _, tt := range tests {
		t.Run(tt.c.CommandType(), func(t *testing.T) {
			got := Encode(tt.c)
			assert.Equal(t, tt.want+"\n", string(got))
			assert.True(t, json.Valid(got))
		})
	}
	line := Encode(SendMessage{Content: "two\nlines \u2028"})
	assert.Equal(t, 1, bytes.Count(line, []byte("\n")), "one line, whatever the content")
}

func TestParse(t *testing.T) {
	ev, err := Parse([]byte(`{"type":"ready","version":"v1alpha1","gateway":"tg","capabilities":["typing"],"new_field":{"a":1}}`))
	require.NoError(t, err)
	assert.Equal(t, Ready{Gateway: "tg", Version: "v1alpha1", Capabilities: []string{"typing"}}, ev)

	ev, err = Parse([]byte(`{"type":"message_received","message_id":43,"chat_id":-100,"sender":{"id":7},` +
		`"content":{"type":"text","text":"hi"},"routing":{"chat_type":"group","chat_id":-100,"sender_id":7},"mentions_bot":true}`))
	require.NoError(t, err)
	m := ev.(MessageReceived)
	assert.Equal(t, ID("43"), m.MessageID, "numeric ids are taken as written")
	assert.Equal(t, ID("-100"), m.ChatID)
	assert.Equal(t, ID("7"), m.Sender.ID)
	assert.Equal(t, "hi", m.Content.Text)
	assert.True(t, m.MentionsBot)

	ev, err = Parse([]byte(`{"type":"message_received","content":{"type":"text","text":"x"},"routing":{"chat_id":"c","sender_id":"s"}}`))
	require.NoError(t, err)
	assert.Equal(t, ID("c"), ev.(MessageReceived).ChatID, "ids given only in routing are used")
	assert.Equal(t, ID("s"), ev.(MessageReceived).Sender.ID)

	ev, err = Parse([]byte(`{"type":"typing_indicator_v9"}`))
	assert.NoError(t, err)
	assert.Nil(t, ev, "unknown types are ignored")

	for _, bad := range []string{
		`not json`, `[1]`, `{}`, `{"type":7}`, `{"type":"ready"}`,
		`{"type":"message_received","chat_id":"1","sender":{"id":"2"}}`,
		`{"type":"message_received","content":{"type":"text"},"sender":{"id":"2"}}`,
		`{"type":"message_received","chat_id":"1","content":{"type":"text"}}`,
		`{"type":"message_received","chat_id":{"x":1},"sender":{"id":"2"},"content":{"type":"text"}}`,
		`{"type":"callback_query","chat_id":"1"}`,
	} {
		_, err := Parse([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestCheckVersion(t *testing.T) {
	assert.NoError(t, CheckVersion(Version))
	for _, v := range []string{"v1", "v1beta2", "1.4.2", "V1"} {
		assert.ErrorContains(t, CheckVersion(v), "some messages may not work", v)
	}
	for _, v := range []string{"v2", "v2alpha1", "0.1.0", "10", "", "alpha", "v"} {
		assert.ErrorContains(t, CheckVersion(v), "another major version", v)
	}
}

func TestParse_RoutingExtras(t *testing.T) {
	const msg = `{"type":"message_received","message_id":"1","chat_id":"c","sender":{"id":"u"},"content":{"type":"text","text":"hi"},` +
		`"routing":{"channel":"whatsapp","chat_type":"group","chat_id":"c","sender_id":"u",%s}}`
	ev, err := Parse([]byte(fmt.Sprintf(msg, `"thread_id":"t1","guild":"g"`)))
	require.NoError(t, err)
	r := ev.(MessageReceived).Routing
	assert.Equal(t, map[string]string{"thread_id": "t1", "guild": "g"}, r.Extra)
	assert.Equal(t, "whatsapp", r.Channel)
	for _, bad := range []string{`"thread_id":7`, `"thread_id":null`, `"thread_id":{"a":"b"}`, `"channel":5`} {
		_, err := Parse([]byte(fmt.Sprintf(msg, bad)))
		assert.Error(t, err, "a bad routing field drops the line: %s", bad)
	}
	var many []string
	for i := range MaxRoutingExtras + 1 {
		many = append(many, fmt.Sprintf(`"x%d":"v"`, i))
	}
	_, err = Parse([]byte(fmt.Sprintf(msg, strings.Join(many, ","))))
	assert.ErrorContains(t, err, "more than 32 extra fields")
}

func TestParse_Auth(t *testing.T) {
	ev, err := Parse([]byte(`{"type":"auth_required","method":{"method":"pair_code","code":"ABCD-1234","expires_in":60}}`))
	require.NoError(t, err)
	assert.Equal(t, AuthRequired{Method: AuthMethod{Method: AuthPairCode, Code: "ABCD-1234", ExpiresIn: 60}}, ev)
	ev, err = Parse([]byte(`{"type":"auth_required","method":{"method":"qr_code","qr_data":"2@x","qr_ascii":"##","expires_in":20}}`))
	require.NoError(t, err)
	assert.Equal(t, "##", ev.(AuthRequired).Method.QRASCII)
	_, err = Parse([]byte(`{"type":"auth_required","method":{"method":"carrier_pigeon"}}`))
	assert.ErrorContains(t, err, "is not qr_code or pair_code")
	ev, err = Parse([]byte(`{"type":"auth_success"}`))
	require.NoError(t, err)
	assert.Equal(t, AuthSuccess{}, ev)
}

func TestLineReader_SkipsLongLines(t *testing.T) {
	long := strings.Repeat("x", 300)
	lr := newLineReader(strings.NewReader("a\n"+long+"\nb\r\n\n"+long+"\nc"), 100)
	var got []string
	for {
		line, err := lr.next()
		if err == errLineTooLong {
			got = append(got, "<long>")
			continue
		}
		if err != nil {
			break
		}
		got = append(got, string(line))
	}
	assert.Equal(t, []string{"a", "<long>", "b", "", "<long>", "c"}, got)
}

func TestBackoff(t *testing.T) {
	b := backoff{base: 100 * time.Millisecond, max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		d := w * time.Millisecond
		got := b.next()
		assert.True(t, got >= d/2 && got <= d, "wait %d: %s not in [%s, %s]", i, got, d/2, d)
	}
	b.reset()
	assert.LessOrEqual(t, b.next(), 100*time.Millisecond)
}

func TestParseApproval(t *testing.T) {
	a, ok := parseApproval("/approve ab12 always")
	assert.True(t, ok)
	assert.Equal(t, approveCmd{id: "ab12", decision: "allow_always"}, a)
	_, ok = parseApproval("/approve ab12")
	assert.False(t, ok)
	a, ok = parseApproval("approve x maybe")
	assert.True(t, ok)
	assert.Empty(t, a.decision)
}

// FuzzPluginLine: no line a plugin writes makes the parser panic, and
// what it accepts has what the core relies on.
func FuzzPluginLine(f *testing.F) {
	data, err := os.ReadFile("testdata/lines.jsonl")
	require.NoError(f, err)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f.Add(append([]byte(nil), sc.Bytes()...))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, err := Parse(line)
		if err != nil {
			return
		}
		switch e := ev.(type) {
		case Ready:
			if e.Version == "" {
				t.Fatal("ready without a version")
			}
		case MessageReceived:
			if e.ChatID == "" || e.Sender.ID == "" || e.Content.Type == "" {
				t.Fatalf("message without chat, sender or content type: %+v", e)
			}
		case CallbackQuery:
			if e.CallbackQueryID == "" || e.ChatID == "" {
				t.Fatalf("callback without id or chat: %+v", e)
			}
		}
		lr := newLineReader(bytes.NewReader(line), 64)
		for {
			if _, err := lr.next(); err != nil && err != errLineTooLong {
				break
			}
		}
	})
}
