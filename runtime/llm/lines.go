package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// MaxLineBytes is the default cap on one line of a streamed body.
const MaxLineBytes = 8 << 20

// ErrLineTooLong is returned by [LineReader.ReadLine] when a line exceeds
// the reader's cap.
var ErrLineTooLong = errors.New("llm: stream line too long")

// LineReader reads newline-terminated lines (NDJSON, SSE) without a fixed
// line limit: a line longer than the bufio buffer is assembled in a scratch
// buffer that grows up to Max bytes.
type LineReader struct {
	r       *bufio.Reader
	scratch []byte
	max     int
}

// NewLineReader returns a LineReader over r. max <= 0 means MaxLineBytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = MaxLineBytes
	}
	br, _ := lineBufs.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, 16<<10)
	} else {
		br.Reset(r)
	}
	return &LineReader{r: br, max: max}
}

// lineBufs recycles the 16 KiB buffers of finished streams: one per model
// call was the largest allocation of a turn.
var lineBufs sync.Pool

// Release returns the reader's buffer for another stream; the reader and
// the lines it returned must not be used after.
func (l *LineReader) Release() {
	if l.r == nil {
		return
	}
	l.r.Reset(nil)
	lineBufs.Put(l.r)
	l.r, l.scratch = nil, nil
}

// ReadLine returns the next line without its "\n" or "\r\n". The slice is
// valid until the next call. A final line without a newline is returned
// with a nil error; the call after it returns io.EOF. Any other error means
// the body broke off.
func (l *LineReader) ReadLine() ([]byte, error) {
	if l.r == nil {
		return nil, errReleased
	}
	line, err := l.r.ReadSlice('\n')
	switch {
	case err == nil:
		return trimEOL(line), nil
	case err == io.EOF && len(line) > 0:
		return trimEOL(line), nil
	case err != bufio.ErrBufferFull:
		return nil, err
	}
	l.scratch = append(l.scratch[:0], line...)
	for {
		line, err = l.r.ReadSlice('\n')
		if len(l.scratch)+len(line) > l.max {
			return nil, ErrLineTooLong
		}
		l.scratch = append(l.scratch, line...)
		switch {
		case err == nil, err == io.EOF:
			return trimEOL(l.scratch), nil
		case err != bufio.ErrBufferFull:
			return nil, err
		}
	}
}

var errReleased = errors.New("llm: the stream was closed")

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
