package sse

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"id, name, data", Event{ID: "3", Name: "done", Data: []byte(`{}`)}, "id: 3\nevent: done\ndata: {}\n\n"},
		{"no id", Event{Name: "token", Data: []byte(`{"content":"x"}`)}, "event: token\ndata: {\"content\":\"x\"}\n\n"},
		{"no name", Event{Data: []byte("x")}, "data: x\n\n"},
		{"empty data", Event{Name: "e"}, "event: e\ndata: \n\n"},
		{"lines", Event{Data: []byte("a\nb\r\nc\rd\n")}, "data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n"},
		{"blank lines and CR LF apart", Event{Data: []byte("\n\r\r\n\n")}, "data: \ndata: \ndata: \ndata: \ndata: \n\n"},
		{"name and id cut at a line break", Event{ID: "1\n2", Name: "a\rb", Data: []byte("d")}, "id: 1\nevent: a\ndata: d\n\n"},
		{"id with NUL left out", Event{ID: "1\x00", Name: "n", Data: []byte("d")}, "event: n\ndata: d\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(AppendEvent([]byte("x"), tt.ev))[1:])
		})
	}
}

func TestAppendComment(t *testing.T) {
	assert.Equal(t, ": keep-alive\n\n", string(AppendComment(nil, "keep-alive")))
	assert.Equal(t, ": \n\n", string(AppendComment(nil, "")))
	assert.Equal(t, ": a\n: b\n: c\n\n", string(AppendComment(nil, "a\r\nb\rc")), "each line a comment: none can become a field")
}

func TestWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWriter(rec, time.Second)
	assert.True(t, rec.Flushed, "the headers go out before the first event")
	require.NoError(t, w.Event(Event{ID: "1", Name: "start", Data: []byte("{}")}))
	require.NoError(t, w.Comment("keep-alive"))
	require.NoError(t, w.Event(Event{Data: []byte("[DONE]")}))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "no", rec.Header().Get("X-Accel-Buffering"))
	assert.Equal(t, "id: 1\nevent: start\ndata: {}\n\n: keep-alive\n\ndata: [DONE]\n\n", rec.Body.String())
}

func BenchmarkAppendEvent(b *testing.B) {
	ev := Event{ID: "12345", Name: "token", Data: []byte(`{"content":"Hello, how can I help you today?"}`)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], ev)
	}
}
