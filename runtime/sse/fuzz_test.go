package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzRoundTrip writes events with AppendEvent, a comment between them,
// and reads them back with a Reader: each comes back as it was written,
// except what the format cannot carry (line breaks in data come back as
// LF; a name or id ends at a line break; an id holding NUL is dropped; no
// name reads as "message").
func FuzzRoundTrip(f *testing.F) {
	f.Add("done", "3", []byte(`{"status":"completed"}`), "keep-alive", "token", "", []byte("a\r\nb\rc\n\nd"))
	f.Add("", "", []byte(""), "", "x:y", "1\x00", []byte(":\n: comment\ndata: x\n\n"))
	f.Add(" spaced", " 7", []byte(" lead\r"), "a\nevent: x\ndata: y", "\xef\xbb\xbf", "\n", []byte("\r\n\r\n"))
	f.Fuzz(func(t *testing.T, name1, id1 string, data1 []byte, comment, name2, id2 string, data2 []byte) {
		in := []Event{{Name: name1, ID: id1, Data: data1}, {Name: name2, ID: id2, Data: data2}}
		var stream []byte
		for _, ev := range in {
			stream = AppendEvent(stream, ev)
			stream = AppendComment(stream, comment)
		}
		p := NewReader(bytes.NewReader(stream), 0)
		for i, ev := range in {
			got, err := p.Next()
			require.NoError(t, err, "event %d of %q", i, stream)
			want := Event{Name: firstLine(ev.Name), ID: firstLine(ev.ID), Data: normalizeLines(ev.Data)}
			if want.Name == "" {
				want.Name = "message"
			}
			if strings.IndexByte(want.ID, 0) >= 0 {
				want.ID = ""
			}
			assert.Equal(t, want.Name, got.Name, "name of event %d in %q", i, stream)
			assert.Equal(t, want.ID, got.ID, "id of event %d in %q", i, stream)
			assert.Equal(t, string(want.Data), string(got.Data), "data of event %d in %q", i, stream)
		}
		_, err := p.Next()
		assert.True(t, errors.Is(err, io.EOF), "nothing more in %q: %v", stream, err)
	})
}

// normalizeLines turns CRLF and CR into LF, as SSE data lines do.
func normalizeLines(b []byte) []byte {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return []byte(strings.ReplaceAll(s, "\r", "\n"))
}

// FuzzReader reads arbitrary bytes under a small limit: no panic, the same
// events whatever the read sizes, no event larger than the limit, no line
// break inside a name or id, and no error but the limit.
func FuzzReader(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.txt")
	require.NoError(f, err)
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte("data: " + strings.Repeat("x", 200) + "\n\n"))
	f.Add([]byte(strings.Repeat("data: 0123456789\n", 20) + "\n"))
	const max = 128
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, last, err := readAll(bytes.NewReader(data), max)
		if err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error on in-memory input: %v", err)
		}
		bytewise, last2, err2 := readAll(iotest.OneByteReader(bytes.NewReader(data)), max)
		if (err == nil) != (err2 == nil) || (err2 != nil && !errors.Is(err2, ErrTooLarge)) {
			t.Fatalf("read sizes change the error: %v vs %v", err, err2)
		}
		if len(whole) != len(bytewise) || last != last2 {
			t.Fatalf("read sizes change the result: %d vs %d events", len(whole), len(bytewise))
		}
		for i, ev := range whole {
			if ev.Name != bytewise[i].Name || ev.ID != bytewise[i].ID || !bytes.Equal(ev.Data, bytewise[i].Data) {
				t.Fatalf("event %d differs: %+v vs %+v", i, ev, bytewise[i])
			}
			if strings.ContainsAny(ev.Name+ev.ID, "\r\n") || bytes.ContainsRune(ev.Data, '\r') {
				t.Fatalf("line break inside a field: %+v", ev)
			}
			if len(ev.Data) > max {
				t.Fatalf("event %d holds %d bytes, over the limit", i, len(ev.Data))
			}
		}
	})
}
