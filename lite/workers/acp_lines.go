package workers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/valyala/fastjson"
)

// maxACPLine bounds one JSON-RPC message from an agent: a file written
// through fs/write_text_file (maxFileBytes) fits, escaped.
const maxACPLine = 4 << 20

// lineGuard stands between an agent's stdout and the SDK, which skips
// lines it cannot parse and buffers up to 10 MiB of one: the first line
// that is too long or not a JSON object ends the stream, with a sentence
// saying why, and bad() lets the runner stop the agent.
type lineGuard struct {
	pr   *io.PipeReader
	mu   sync.Mutex
	err  error
	bad  chan struct{} // closed when err is set
	done chan struct{} // closed when the copy ends
}

func newLineGuard(src io.Reader) *lineGuard {
	pr, pw := io.Pipe()
	g := &lineGuard{pr: pr, bad: make(chan struct{}), done: make(chan struct{})}
	go g.copy(src, pw)
	return g
}

func (g *lineGuard) Read(p []byte) (int, error) { return g.pr.Read(p) }

// failure is why the stream was cut, or nil.
func (g *lineGuard) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *lineGuard) fail(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
		close(g.bad)
	}
}

// close stops the copy (the runner killed the agent: its stdout ends).
func (g *lineGuard) close() { _ = g.pr.Close() }

func (g *lineGuard) copy(src io.Reader, pw *io.PipeWriter) {
	defer close(g.done)
	br := bufio.NewReaderSize(src, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxACPLine {
			g.fail(fmt.Errorf("it wrote a line longer than %d MiB", maxACPLine>>20))
			_ = pw.CloseWithError(g.failure())
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			if verr := checkMessage(line); verr != nil {
				g.fail(verr)
				_ = pw.CloseWithError(verr)
				return
			}
			if _, werr := pw.Write(line); werr != nil {
				return
			}
		}
		line = line[:0]
		if err != nil {
			_ = pw.Close()
			return
		}
	}
}

// checkMessage refuses what is not one JSON object: a JSON-RPC message
// is always one.
func checkMessage(line []byte) error {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	if t[0] != '{' || fastjson.ValidateBytes(t) != nil {
		return fmt.Errorf("it wrote %q, which is not a JSON-RPC message", cut(string(t), 60))
	}
	return nil
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
