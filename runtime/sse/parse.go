package sse

import (
	"bytes"
	"errors"
	"strconv"
)

// DefaultMax is the limit on a line and on one event's data when none is
// given: an assistant message is one data: line, so this is the largest
// answer a client of the HTTP API accepts.
const DefaultMax = 16 << 20

// ErrTooLarge is returned (wrapped, with the limit) when a line or the
// data of one event is longer than the reader's limit.
var ErrTooLarge = errors.New("sse: a line or event of the stream is over the size limit")

func tooLarge(max int) error {
	return &limitError{max}
}

// limitError says the limit in its one sentence and unwraps to ErrTooLarge.
type limitError struct{ max int }

func (e *limitError) Error() string {
	return "sse: a line or event of the stream is over the " + strconv.Itoa(e.max) + "-byte limit"
}

func (e *limitError) Unwrap() error { return ErrTooLarge }

// Parser applies the field rules (see the package doc) to lines without
// their line end, and says when one ends an event. The zero value is ready
// with the limit [DefaultMax]; one Parser serves one stream.
type Parser struct {
	// Max bounds the data of one event; 0 means DefaultMax.
	Max int

	// name and id keep the last value seen even after a dispatch, so a
	// stream that repeats one name on every event (Anthropic's
	// content_block_delta) allocates it once: only named and hasID say
	// whether the pending event has one.
	name, id     string
	named, hasID bool
	lastID       string
	data         []byte
	hasData      bool
}

// Line takes one line. When the line ends an event it returns it (ok);
// the event's Data is valid until the next call. err is non-nil, wrapping
// [ErrTooLarge], when the event's data would pass the limit; the pending
// event is then dropped.
func (p *Parser) Line(line []byte) (ev Event, ok bool, err error) {
	if len(line) == 0 {
		ev, ok = p.Flush()
		return ev, ok, nil
	}
	if line[0] == ':' {
		return Event{}, false, nil
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		return Event{}, false, p.addData(value)
	case "event":
		if string(value) != p.name {
			p.name = string(value)
		}
		p.named = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			if string(value) != p.id {
				p.id = string(value)
			}
			p.hasID = true
			p.lastID = p.id
		}
	}
	// retry: and unknown fields are ignored.
	return Event{}, false, nil
}

func (p *Parser) addData(value []byte) error {
	max := p.Max
	if max <= 0 {
		max = DefaultMax
	}
	if !p.hasData {
		p.data = p.data[:0]
	}
	n := len(value)
	if p.hasData {
		n += len(p.data) + 1
	}
	if n > max {
		p.reset()
		return tooLarge(max)
	}
	if p.hasData {
		p.data = append(p.data, '\n')
	}
	p.data = append(p.data, value...)
	p.hasData = true
	return nil
}

// Flush ends the pending event: it returns it if it has data (ok), and
// forgets it either way. A blank line does this; a caller that wants the
// last event of a stream that ended without its blank line calls it at
// the end. The event's Data is valid until the next call.
func (p *Parser) Flush() (ev Event, ok bool) {
	if p.hasData {
		ev, ok = Event{Name: "message", Data: p.data}, true
		if p.named && p.name != "" {
			ev.Name = p.name
		}
		if p.hasID {
			ev.ID = p.id
		}
	}
	p.reset()
	return ev, ok
}

func (p *Parser) reset() {
	p.named, p.hasID, p.hasData = false, false, false
}

// LastID is the last id: field seen, dispatched or not: what a client that
// reconnects sends as Last-Event-ID.
func (p *Parser) LastID() string { return p.lastID }
