package bgproc

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Bounds of watching.
const (
	maxPattern = 512     // bytes of a watch pattern
	noticeTail = 2000    // bytes of output an end notice shows
	maxScan    = maxLine // bytes of one line the pattern sees
)

// lineScan holds the start of a line whose end has not come yet.
type lineScan struct {
	partial []byte
}

// lines calls fn for each complete line in chunk (with what came before
// it), each cut at maxScan bytes.
func (s *lineScan) lines(chunk []byte, fn func([]byte) bool) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			room := maxScan - len(s.partial)
			s.partial = append(s.partial, chunk[:max(min(room, len(chunk)), 0)]...)
			return
		}
		line := chunk[:i]
		if len(s.partial) > 0 {
			room := maxScan - len(s.partial)
			line = append(s.partial, line[:max(min(room, len(line)), 0)]...)
		} else if len(line) > maxScan {
			line = line[:maxScan]
		}
		s.partial = s.partial[:0]
		if !fn(line) {
			return
		}
		chunk = chunk[i+1:]
	}
}

// scan checks the output's lines against the watched pattern, on the
// copier goroutine; a match tells the session once and disarms it.
func (m *Manager) scan(p *proc, s *lineScan, chunk []byte) {
	m.mu.Lock()
	re := p.pattern
	m.mu.Unlock()
	if re == nil {
		s.partial = s.partial[:0]
		return
	}
	s.lines(chunk, func(line []byte) bool {
		if !re.Match(line) {
			return true
		}
		m.mu.Lock()
		fire := p.pattern == re && !m.closed
		if fire {
			p.pattern = nil
		}
		rec := p.rec
		m.mu.Unlock()
		if fire && m.o.Notify != nil {
			m.o.Notify(rec.Agent, rec.Session, fmt.Sprintf("Background process %s%s printed a line matching %q:\n%s",
				rec.Handle, labelled(rec), re.String(), strings.ToValidUTF8(string(line), "\uFFFD")))
		}
		return false
	})
}

// compilePattern checks a watch pattern: a Go regexp of bounded length.
func compilePattern(pattern string) (*regexp.Regexp, error) {
	if len(pattern) > maxPattern {
		return nil, fmt.Errorf("pattern is %d bytes long, over %d: give a shorter one", len(pattern), maxPattern)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid Go regexp (%v): fix it", err)
	}
	return re, nil
}

// watch arms p's end notice and, with re, its pattern.
func (m *Manager) watch(p *proc, re *regexp.Regexp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.notifyEnd, p.pattern = true, re
}

// unwatch disarms both.
func (m *Manager) unwatch(p *proc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.notifyEnd, p.pattern = false, nil
}

func labelled(r Record) string {
	if r.Label == "" {
		return ""
	}
	return " (" + r.Label + ")"
}

// endNotice is what a session is told when a process it watches ends:
// how, after how long, and the last of its output.
func endNotice(r Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Background process %s%s %s after %s: %s", r.Handle, labelled(r), describe(r),
		r.Ended.Sub(r.Started).Round(time.Second), oneLine(r.Command, 200))
	if out, err := readTail(r.Workspace, r.Log, noticeTail); err == nil && out != "" {
		b.WriteString("\nLast output:\n")
		b.WriteString(out)
	}
	return b.String()
}

// describe says how a process ended, in words.
func describe(r Record) string {
	code := -1
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	switch r.Status {
	case Exited:
		return fmt.Sprintf("exited with code %d", code)
	case Killed:
		return "was killed"
	case TimedOut:
		return fmt.Sprintf("timed out after %d s and was killed", r.Timeout)
	case Lost:
		return "was lost (the daemon stopped while it ran)"
	}
	return string(r.Status)
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
