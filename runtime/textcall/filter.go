package textcall

import "strings"

// Filter sits between a model's text deltas and the user. It passes text
// through until it sees what may be the start of a text-form tool call,
// and holds everything from there on. When the answer is complete the
// caller runs Extract on the full text and calls Discard if it found calls
// (the markup never reaches the user) or Flush if not.
//
// Starts it recognises: "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"
// (even split across deltas), a ``` fence, and a message whose first
// non-space character is { or [. A fence naming another language
// (```python) is released as soon as its first line is complete, and its
// closing fence passes through.
//
// A Filter is not safe for concurrent use; emit is called from Write and
// Flush.
type Filter struct {
	emit    func(string)
	tail    string // a possible marker start, or leading space, not yet emitted
	held    strings.Builder
	holding bool
	atFence bool // holding from a fence whose info line is incomplete
	inCode  bool // inside a released code block
	started bool // a non-space character was seen
}

// NewFilter returns a Filter that passes text on to emit.
func NewFilter(emit func(string)) *Filter {
	return &Filter{emit: emit}
}

var markers = [...]string{openTag, fence, mistralTag, pythonTag}

// Write takes the next delta.
func (f *Filter) Write(s string) {
	if f.holding {
		f.held.WriteString(s)
		f.checkFence()
		return
	}
	if f.tail != "" {
		s = f.tail + s
		f.tail = ""
	}
	f.pass(s)
}

func (f *Filter) pass(s string) {
	for s != "" {
		if !f.started {
			t := strings.TrimLeft(s, " \t\r\n")
			if t == "" {
				f.tail = s
				return
			}
			f.started = true
			if t[0] == '{' || t[0] == '[' {
				f.hold(s)
				return
			}
		}
		i, m := f.find(s)
		if i < 0 {
			k := partialMarker(s)
			f.out(s[:len(s)-k])
			f.tail = s[len(s)-k:]
			return
		}
		f.out(s[:i])
		if m == fence && f.inCode {
			f.out(fence)
			f.inCode = false
			s = s[i+len(fence):]
			continue
		}
		f.hold(s[i:])
		f.atFence = m == fence
		f.checkFence()
		return
	}
}

// find returns the index of the first marker in s, and which.
func (f *Filter) find(s string) (int, string) {
	if f.inCode {
		return strings.Index(s, fence), fence
	}
	at, which := -1, ""
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// partialMarker returns the length of the longest suffix of s that is a
// proper prefix of a marker.
func partialMarker(s string) int {
	for k := min(len(s), len(pythonTag)-1); k > 0; k-- {
		suf := s[len(s)-k:]
		for _, m := range markers {
			if len(suf) < len(m) && strings.HasPrefix(m, suf) {
				return k
			}
		}
	}
	return 0
}

// checkFence releases a held fence once its info line shows it is code in
// some other language.
func (f *Filter) checkFence() {
	if !f.atFence {
		return
	}
	h := f.held.String()
	nl := strings.IndexByte(h, '\n')
	if nl < 0 {
		return
	}
	f.atFence = false
	if callLang(strings.ToLower(strings.TrimSpace(h[len(fence):nl]))) {
		return
	}
	f.holding = false
	f.held.Reset()
	f.out(h[:nl+1])
	f.inCode = true
	f.pass(h[nl+1:])
}

func (f *Filter) hold(s string) {
	f.holding = true
	f.held.WriteString(s)
}

func (f *Filter) out(s string) {
	if s != "" {
		f.emit(s)
	}
}

// Flush emits everything held back. Call it when the answer is complete
// and holds no tool call.
func (f *Filter) Flush() {
	s := f.tail + f.held.String()
	f.reset()
	f.out(s)
}

// Discard drops everything held back. Call it when the held text was a
// tool call.
func (f *Filter) Discard() { f.reset() }

func (f *Filter) reset() {
	f.tail = ""
	f.held.Reset()
	f.holding, f.atFence = false, false
}
