package sse

import (
	"bytes"
	"net/http"
	"strings"
	"time"
)

// Event is one event of a stream.
type Event struct {
	// Name is the event: field. The writer leaves the line out when it is
	// ""; the reader gives "message" for an event without one.
	Name string
	// ID is the event's own id: field, "" when it had none (the HTTP API's
	// tokens). Unlike a browser's lastEventId it does not carry over to the
	// next event: the reader's LastID does that.
	ID string
	// Data is the data: lines joined with "\n".
	Data []byte
}

// AppendEvent appends ev to dst: an id: line when ev.ID is set, an event:
// line when ev.Name is set, one data: line per line of ev.Data (split at
// CRLF, LF or CR, so a reader gets the lines back joined with LF), and the
// blank line that dispatches the event. A name or id cannot span lines:
// it is cut at its first CR or LF, and an id holding NUL, which readers
// ignore, is left out.
func AppendEvent(dst []byte, ev Event) []byte {
	if id := firstLine(ev.ID); id != "" && strings.IndexByte(id, 0) < 0 {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	if name := firstLine(ev.Name); name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	data := ev.Data
	for {
		dst = append(dst, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			dst = append(dst, data...)
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n', '\n')
}

// AppendComment appends a comment, which readers skip: one ": " line per
// line of text, then a blank line. A comment is how a quiet stream shows
// it is alive (": keep-alive") to the client and to the proxies between
// that would otherwise close it.
func AppendComment(dst []byte, text string) []byte {
	for {
		dst = append(dst, ": "...)
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			dst = append(dst, text...)
			break
		}
		dst = append(dst, text[:i]...)
		dst = append(dst, '\n')
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return append(dst, '\n', '\n')
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// Writer writes an event stream as the body of an HTTP response, one
// flushed write per event, so each reaches the client when it is sent. It
// is not safe for concurrent use: one goroutine serves one response.
type Writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
}

// NewWriter answers 200 with the event-stream headers and sends them at
// once: a client following a quiet stream would otherwise wait for the
// first event to learn it is open. Each later write must finish within
// timeout (0: no deadline), so a client that stops reading is dropped
// instead of holding the writing goroutine forever.
func NewWriter(w http.ResponseWriter, timeout time.Duration) *Writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	// nginx buffers responses by default, which would hold events back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return &Writer{w: w, rc: rc, timeout: timeout}
}

// Event writes one event (see [AppendEvent]).
func (s *Writer) Event(ev Event) error {
	s.buf = AppendEvent(s.buf[:0], ev)
	return s.write(s.buf)
}

// Comment writes a comment (see [AppendComment]).
func (s *Writer) Comment(text string) error {
	s.buf = AppendComment(s.buf[:0], text)
	return s.write(s.buf)
}

func (s *Writer) write(b []byte) error {
	if s.timeout > 0 {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}
