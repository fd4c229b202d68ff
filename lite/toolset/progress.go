package toolset

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress shows a long operation to the person who started it (a model
// pull, the first compile of a WASM tool, an agent import, a database
// compaction). On a terminal it is one line, rewritten in place: a
// carriage return, the line, erased to its end. Anywhere else (a pipe, a
// log) it prints a plain line per step and never one per percent, so the
// output reads as a list of what happened. A nil *Progress shows nothing.
// It is safe for concurrent use.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	step  string
	shown bool      // a line is on the terminal
	drawn time.Time // when it was last drawn
	// now and every are seams for tests: the clock, and the least time
	// between two redraws of a count.
	now   func() time.Time
	every time.Duration
}

// ProgressWidth bounds the terminal line: a line that wraps cannot be
// rewritten in place.
const ProgressWidth = 72

// redrawEvery is the least time between two redraws of a count.
const redrawEvery = 100 * time.Millisecond

// NewProgress shows progress on w; tty says w is a terminal.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty, now: time.Now, every: redrawEvery}
}

// Every sets the least time between two redraws of a count (default
// 100 ms; 0 draws every count, as tests of a caller's counts want) and
// returns p. Call it before the operation starts.
func (p *Progress) Every(d time.Duration) *Progress {
	p.every = d
	return p
}

// Step starts a step of the operation: the line in place on a terminal, a
// line of its own elsewhere. Repeating the current step does nothing.
func (p *Progress) Step(step string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := clean(step)
	if s == p.step {
		return
	}
	p.step = s
	if !p.tty {
		fmt.Fprintln(p.w, s)
		return
	}
	p.draw(s)
}

// Count shows how far the current step is: done of total bytes, total 0
// when the end is not known. Only a terminal shows it, at most ten times a
// second and always when done reaches total.
func (p *Progress) Count(done, total int64) {
	if p == nil || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.now(); t.Sub(p.drawn) < p.every && (total <= 0 || done < total) {
		return
	}
	step := OneLine(p.step, ProgressWidth-32) // room for the count
	s := step + " " + ByteSize(done)
	if total > 0 {
		done = min(max(done, 0), total)
		s = fmt.Sprintf("%s %3d%% (%s of %s)", step, done*100/total, ByteSize(done), ByteSize(total))
	}
	p.draw(s)
}

// Done ends the operation: the terminal's line is erased, and msg, when
// not empty, printed as a line of its own.
func (p *Progress) Done(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	p.step = ""
	if msg != "" {
		fmt.Fprintln(p.w, msg)
	}
}

// After shows step once fn has run for longer than d, and ends it when
// fn returns: an operation that is quick when its result is cached (a
// WASM tool compiled before) says nothing.
func (p *Progress) After(d time.Duration, step string, fn func() error) error {
	if p == nil {
		return fn()
	}
	shown := make(chan struct{})
	t := time.AfterFunc(d, func() {
		p.Step(step)
		close(shown)
	})
	err := fn()
	if !t.Stop() {
		<-shown // erased only once it is there
		p.Done("")
	}
	return err
}

// draw puts s on the terminal's line.
func (p *Progress) draw(s string) {
	fmt.Fprint(p.w, "\r\x1b[K"+s)
	p.shown, p.drawn = true, p.now()
}

// clean makes s one line of at most ProgressWidth characters: a step may
// come from outside (a server's status), and a control character or a
// line that wraps would break the line in place.
func clean(s string) string { return OneLine(s, ProgressWidth) }

// OneLine is s with control characters blanked, cut to n characters: a
// line from outside (a server's status or error) made safe to show.
func OneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	return s
}

// ByteSize is n in the largest binary unit that keeps it at 1 or more.
func ByteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
