package llm

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Body is a request body built in a recycled buffer. Every model call
// sends the whole window, so building each body in a fresh, growing slice
// was the largest share of a turn's allocations; a Body is reused once
// the caller has released it and the transport has closed every reader
// it was given (a transport may close a body after RoundTrip returns).
type Body struct {
	// B is the body: encode into B[:0].
	B    []byte
	refs atomic.Int32
}

// maxPooledBody is the largest buffer kept for reuse: a rare huge request
// does not pin its memory.
const maxPooledBody = 1 << 20

var bodies = sync.Pool{New: func() any { return new(Body) }}

// NewBody returns an empty Body held by the caller until Release.
func NewBody() *Body {
	b := bodies.Get().(*Body)
	b.B = b.B[:0]
	b.refs.Store(1)
	return b
}

// Release gives up the caller's hold: B must not be used after.
func (b *Body) Release() { b.unref() }

func (b *Body) unref() {
	if b.refs.Add(-1) == 0 && cap(b.B) <= maxPooledBody {
		bodies.Put(b)
	}
}

// Request is a request with the body; its GetBody makes fresh readers for
// the transport's retries and redirects.
func (b *Body) Request(method, url string) (*http.Request, error) {
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, err
	}
	r.Body = b.reader()
	r.ContentLength = int64(len(b.B))
	r.GetBody = func() (io.ReadCloser, error) { return b.reader(), nil }
	return r, nil
}

// reader reads B and lets go of its hold when closed. net/http treats it
// as it treats any body it does not know to be in memory: the headers go
// out in a write of their own, and the body through a copy buffer (every
// body of known length is wrapped in an io.LimitedReader, so no WriteTo
// helps). [NewTransport]'s connections recycle that buffer too.
func (b *Body) reader() io.ReadCloser {
	b.refs.Add(1)
	r := &bodyReader{b: b}
	r.Reset(b.B)
	return r
}

type bodyReader struct {
	bytes.Reader
	b      *Body
	closed atomic.Bool
}

func (r *bodyReader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.b.unref()
	}
	return nil
}
