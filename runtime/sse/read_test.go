package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads every event of a stream with a Reader of limit max.
func readAll(r io.Reader, max int) ([]Event, string, error) {
	p := NewReader(r, max)
	var out []Event
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			return out, p.LastID(), nil
		}
		if err != nil {
			return out, p.LastID(), err
		}
		out = append(out, ev)
	}
}

func TestReader_Next(t *testing.T) {
	ev := func(name, id, data string) Event { return Event{Name: name, ID: id, Data: []byte(data)} }
	tests := []struct {
		name   string
		in     string
		want   []Event
		lastID string
	}{
		{"one event", "id: 3\nevent: done\ndata: {}\n\n", []Event{ev("done", "3", "{}")}, "3"},
		{"no name is message", "data: x\n\n", []Event{ev("message", "", "x")}, ""},
		{"empty name is message", "event:\ndata: x\n\n", []Event{ev("message", "", "x")}, ""},
		{"multi-line data", "data: a\ndata: b\ndata:\n\n", []Event{ev("message", "", "a\nb\n")}, ""},
		{"one space removed", "data:  two\ndata:none\n\n", []Event{ev("message", "", " two\nnone")}, ""},
		{"CRLF", "event: t\r\ndata: x\r\n\r\n", []Event{ev("t", "", "x")}, ""},
		{"lone CR", "event: t\rdata: x\r\r", []Event{ev("t", "", "x")}, ""},
		{"comments and keep-alives", ": keep-alive\n\n:x\ndata: y\n\n", []Event{ev("message", "", "y")}, ""},
		{"no data: not dispatched, id kept", "id: 7\nevent: x\n\ndata: z\n\n", []Event{ev("message", "", "z")}, "7"},
		{"id only on its own event", "id: 1\ndata: a\n\ndata: b\n\n", []Event{ev("message", "1", "a"), ev("message", "", "b")}, "1"},
		{"empty id resets the last", "id: 1\ndata: a\n\nid:\ndata: b\n\n", []Event{ev("message", "1", "a"), ev("message", "", "b")}, ""},
		{"incomplete event at EOF dropped", "data: a\n\ndata: b", []Event{ev("message", "", "a")}, ""},
		{"field without colon", "data\n\n", []Event{ev("message", "", "")}, ""},
		{"id with NUL ignored", "id: 1\n\nid: 2\x003\ndata: d\n\n", []Event{ev("message", "", "d")}, "1"},
		{"BOM skipped", "\xef\xbb\xbfdata: b\n\n", []Event{ev("message", "", "b")}, ""},
		{"unknown fields and retry ignored", "retry: 5\nfoo: bar\ndata: q\n\n", []Event{ev("message", "", "q")}, ""},
		{"empty stream", "", nil, ""},
		{"blank lines only", "\n\n\r\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lastID, err := readAll(strings.NewReader(tt.in), 0)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.lastID, lastID)
			oneByte, _, err := readAll(iotest.OneByteReader(strings.NewReader(tt.in)), 0)
			require.NoError(t, err)
			assert.Equal(t, got, oneByte, "the same events whatever the read sizes")
		})
	}
}

func TestReader_ReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(io.ErrUnexpectedEOF))
	got, _, err := readAll(r, 0)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Len(t, got, 1)
}

func TestReader_TooLarge(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ name, in string }{
		{"one long line", "data: " + long + "\n\n"},
		{"many short lines", strings.Repeat("data: "+long[:20]+"\n", 10) + "\n"},
		{"a long comment", ":" + long + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readAll(strings.NewReader("data: ok\n\n"+tt.in), 64)
			require.ErrorIs(t, err, ErrTooLarge)
			assert.EqualError(t, err, "sse: a line or event of the stream is over the 64-byte limit")
			assert.Equal(t, []Event{{Name: "message", Data: []byte("ok")}}, got, "what came before is read")
		})
	}
	got, _, err := readAll(strings.NewReader("data: "+long[:58]+"\n\n"), 64)
	require.NoError(t, err, "a line of exactly the limit")
	assert.Len(t, got, 1)
}

func TestParser_Flush(t *testing.T) {
	var p Parser
	for _, l := range []string{"event: x", "id: 9", "data: a", "data: b"} {
		_, ok, err := p.Line([]byte(l))
		require.NoError(t, err)
		require.False(t, ok)
	}
	ev, ok := p.Flush()
	require.True(t, ok, "the event the stream did not end")
	assert.Equal(t, Event{Name: "x", ID: "9", Data: []byte("a\nb")}, ev)
	_, ok = p.Flush()
	assert.False(t, ok, "flushed once")
	assert.Equal(t, "9", p.LastID())
}

// A name repeated on every event is allocated once: the model providers
// parse thousands of "event: content_block_delta" lines per answer.
func TestParser_RepeatedNameAllocatesNothing(t *testing.T) {
	var p Parser
	lines := [][]byte{[]byte("event: content_block_delta"), []byte(`data: {"type":"content_block_delta"}`), nil}
	feed := func() {
		for _, l := range lines {
			if _, _, err := p.Line(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed()
	assert.Zero(t, testing.AllocsPerRun(100, feed))
}

func BenchmarkReader(b *testing.B) {
	var stream []byte
	for range 200 {
		stream = AppendEvent(stream, Event{Name: "token", Data: []byte(`{"content":"token "}`)})
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(strings.NewReader(string(stream)), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
