package httpapi

// The Server-Sent Events wire format, both ways: appendSSE is what the
// server writes, sseReader what the client reads, and FuzzSSERoundTrip
// checks that one reads back what the other wrote.

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// maxSSELine caps one line of an event stream. An assistant message is
// one data line, so this is the largest answer the client accepts.
const maxSSELine = 16 << 20

// sseEvent is one event of a stream: what appendSSE writes and an
// sseReader dispatches.
type sseEvent struct {
	// Name is the event: field; read back as "message" when the event had
	// none.
	Name string
	// ID is the event's own id: field, "" when it had none (tokens).
	ID string
	// Data is the data: lines joined with "\n".
	Data []byte
}

// appendSSE appends ev to dst: an id: line when ev.ID is set, an event:
// line when ev.Name is set, one data: line per line of ev.Data (split at
// CRLF, LF or CR, so a reader gets the lines back joined with LF), and the
// blank line that dispatches the event. A name or id cannot span lines:
// it is cut at its first CR or LF, and an id holding NUL, which readers
// ignore, is left out.
func appendSSE(dst []byte, ev sseEvent) []byte {
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

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// sseReader parses a Server-Sent Events stream as the WHATWG spec says:
// lines end with CRLF, LF or CR; a blank line dispatches the event; lines
// starting with ':' are comments (keep-alives); "field: value" loses one
// space after the colon; data: lines are joined with "\n"; an event
// without data is not dispatched; an incomplete event at the end of the
// stream is dropped; a leading byte-order mark is skipped.
//
// # Caveats
//
// A line ended by a lone CR is only seen when the next byte arrives (it
// could be the first half of a CRLF). agnx-lite servers end lines with LF.
type sseReader struct {
	sc *bufio.Scanner
	// LastID is the last id: field seen, dispatched or not: what a
	// reconnecting client sends as Last-Event-ID.
	LastID string
	first  bool
	name   string
	id     string
	data   []byte
	// hasData is true once a data: line was seen for the pending event.
	hasData bool
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	sc.Split(scanSSELines)
	return &sseReader{sc: sc, first: true}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// a read error or a line longer than maxSSELine is returned as is.
func (p *sseReader) Next() (sseEvent, error) {
	for p.sc.Scan() {
		line := p.sc.Bytes()
		if p.first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			p.first = false
		}
		if len(line) == 0 {
			if ev, ok := p.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		p.field(line)
	}
	if err := p.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

func (p *sseReader) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(name) {
	case "event":
		p.name = string(value)
	case "data":
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.id = string(value)
			p.LastID = p.id
		}
	}
	// retry: and unknown fields are ignored: the client has its own
	// reconnection policy.
}

func (p *sseReader) dispatch() (sseEvent, bool) {
	ev := sseEvent{Name: p.name, ID: p.id}
	ok := p.hasData
	if ok {
		ev.Data = bytes.Clone(p.data[:len(p.data)-1])
		if ev.Name == "" {
			ev.Name = "message"
		}
	}
	p.name, p.id, p.data, p.hasData = "", "", p.data[:0], false
	return ev, ok
}

// scanSSELines splits at CRLF, LF or CR.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a CR at the end: wait to see whether LF follows
}
