package llm

import "bytes"

// SSEEvents frames SSE lines into events (the data of each event). Only
// the "data" field matters here: comments (":" lines, OpenRouter's
// keep-alives) and other fields (event, id, retry) are skipped. Several
// data lines of one event are joined with "\n", as the SSE spec says. The
// zero value is ready; one SSEEvents serves one body.
type SSEEvents struct {
	data []byte
	has  bool
}

// Feed takes one line without its end-of-line. When the line ends an event
// it returns the event's data, valid until the next call.
func (e *SSEEvents) Feed(line []byte) (data []byte, ok bool) {
	if len(line) == 0 {
		return e.Flush()
	}
	if line[0] == ':' {
		return nil, false
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if string(field) != "data" {
		return nil, false
	}
	if e.has {
		e.data = append(e.data, '\n')
	} else {
		e.data = append(e.data[:0], value...)
		e.has = true
		return nil, false
	}
	e.data = append(e.data, value...)
	return nil, false
}

// Flush ends the pending event, if any. It is also called at the end of
// the body, since some servers omit the last blank line.
func (e *SSEEvents) Flush() (data []byte, ok bool) {
	if !e.has {
		return nil, false
	}
	e.has = false
	return e.data, true
}
