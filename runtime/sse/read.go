package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Reader reads the events of a stream: it splits lines at CRLF, LF or
// CR, skips a leading byte-order mark and feeds the lines to a [Parser].
// An incomplete event at the end of the stream is dropped.
type Reader struct {
	sc    *bufio.Scanner
	p     Parser
	max   int
	first bool
}

// NewReader returns a Reader over r that allows lines and events of up to
// max bytes; max <= 0 means [DefaultMax].
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMax
	}
	sc := bufio.NewScanner(r)
	// Room for the line end too (two bytes: CRLF, or a CR and the byte
	// that shows it is not CRLF); Next checks the line itself.
	sc.Buffer(make([]byte, 0, min(4096, max+2)), max+2)
	sc.Split(scanLines)
	return &Reader{sc: sc, p: Parser{Max: max}, max: max, first: true}
}

// Next returns the next event; its Data is the caller's to keep. At the
// end of the stream it returns io.EOF; a line or event over the limit is
// an error wrapping [ErrTooLarge]; a read error is returned as is.
func (r *Reader) Next() (Event, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			r.first = false
		}
		if len(line) > r.max {
			return Event{}, tooLarge(r.max)
		}
		ev, ok, err := r.p.Line(line)
		if err != nil {
			return Event{}, err
		}
		if ok {
			ev.Data = append(make([]byte, 0, len(ev.Data)), ev.Data...)
			return ev, nil
		}
	}
	switch err := r.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return Event{}, tooLarge(r.max)
	case err != nil:
		return Event{}, err
	}
	return Event{}, io.EOF
}

// LastID is the last id: field seen, dispatched or not: what a client that
// reconnects sends as Last-Event-ID.
func (r *Reader) LastID() string { return r.p.LastID() }

// scanLines splits at CRLF, LF or CR.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
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
