package agnxcompat

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file ports the parent's SSE line parser and event assembler
// (crates/duragent-client/src/sse_parser.rs, AGNX-COMPAT §7) rule for rule.

// sseLineKind is what one line of the stream is.
type sseLineKind int

const (
	lineData sseLineKind = iota
	lineEvent
	lineID
	lineRetry
	lineEmpty
	lineComment
)

type sseLine struct {
	kind  sseLineKind
	text  string
	retry uint64
}

// sseEvent is one assembled block: data lines joined by "\n", the last
// event:, id: and retry: values.
type sseEvent struct {
	Data  string
	Event *string
	ID    *string
	Retry *uint64
}

// parseSSELine strips data:, event:, id: or retry: and one space after it;
// a retry: that is not a u64, a ":" line and an unknown field are comments.
func parseSSELine(line string) sseLine {
	if line == "" {
		return sseLine{kind: lineEmpty}
	}
	field := func(prefix string) (string, bool) {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			return "", false
		}
		return strings.TrimPrefix(rest, " "), true
	}
	if v, ok := field("data:"); ok {
		return sseLine{kind: lineData, text: v}
	}
	if v, ok := field("event:"); ok {
		return sseLine{kind: lineEvent, text: v}
	}
	if v, ok := field("id:"); ok {
		return sseLine{kind: lineID, text: v}
	}
	if v, ok := field("retry:"); ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			return sseLine{kind: lineRetry, retry: n}
		}
		return sseLine{kind: lineComment, text: line}
	}
	if v, ok := field(":"); ok {
		return sseLine{kind: lineComment, text: v}
	}
	return sseLine{kind: lineComment, text: line}
}

// sseParser turns network chunks into events the way the parent does: a
// chunk that is not valid UTF-8 on its own is dropped; lines end at "\n"
// with one trailing "\r" removed; a blank line ends a block that has data,
// event, id or retry.
type sseParser struct {
	buf     string
	data    []string
	event   *string
	id      *string
	retry   *uint64
	dropped int // chunks dropped for invalid UTF-8
}

// feed takes one network chunk and returns the blocks it completed.
func (p *sseParser) feed(chunk []byte) []sseEvent {
	if !utf8.Valid(chunk) {
		p.dropped++
		return nil
	}
	p.buf += string(chunk)
	var out []sseEvent
	for {
		i := strings.IndexByte(p.buf, '\n')
		if i < 0 {
			return out
		}
		line := strings.TrimSuffix(p.buf[:i], "\r")
		p.buf = p.buf[i+1:]
		if ev, ok := p.push(parseSSELine(line)); ok {
			out = append(out, ev)
		}
	}
}

// finish is the end of the body: what is left in the buffer is one last
// line (no "\r" stripped, as in the parent), and an unfinished block is
// emitted.
func (p *sseParser) finish() []sseEvent {
	var out []sseEvent
	if p.buf != "" {
		line := p.buf
		p.buf = ""
		if ev, ok := p.push(parseSSELine(line)); ok {
			out = append(out, ev)
		}
	}
	if p.hasContent() {
		out = append(out, p.build())
	}
	return out
}

func (p *sseParser) push(l sseLine) (sseEvent, bool) {
	switch l.kind {
	case lineEmpty:
		if p.hasContent() {
			return p.build(), true
		}
	case lineData:
		p.data = append(p.data, l.text)
	case lineEvent:
		s := l.text
		p.event = &s
	case lineID:
		s := l.text
		p.id = &s
	case lineRetry:
		n := l.retry
		p.retry = &n
	case lineComment:
	}
	return sseEvent{}, false
}

func (p *sseParser) hasContent() bool {
	return len(p.data) > 0 || p.event != nil || p.id != nil || p.retry != nil
}

func (p *sseParser) build() sseEvent {
	ev := sseEvent{Data: strings.Join(p.data, "\n"), Event: p.event, ID: p.id, Retry: p.retry}
	p.data, p.event, p.id, p.retry = nil, nil, nil, nil
	return ev
}
