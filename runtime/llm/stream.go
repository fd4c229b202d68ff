package llm

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Causes the watchdog cancels a request with.
var (
	errFirstByte = errors.New("llm: first-token timeout")
	errIdle      = errors.New("llm: stream idle timeout")
)

// watchdog cancels a request when the body stays silent too long. One timer
// per request, re-armed on each read: no goroutine per chunk.
type watchdog struct {
	t       *time.Timer
	idle    time.Duration
	started atomic.Bool
}

func startWatchdog(cancel context.CancelCauseFunc, first, idle time.Duration) *watchdog {
	w := &watchdog{idle: idle}
	if first <= 0 {
		first = math.MaxInt64
	}
	w.t = time.AfterFunc(first, func() {
		if w.started.Load() {
			cancel(errIdle)
		} else {
			cancel(errFirstByte)
		}
	})
	return w
}

// kick records that bytes arrived: from now on the idle timeout applies.
func (w *watchdog) kick() {
	if !w.started.Load() {
		w.started.Store(true)
	}
	if w.idle > 0 {
		w.t.Reset(w.idle)
	} else {
		w.t.Stop()
	}
}

func (w *watchdog) stop() { w.t.Stop() }

type watchedReader struct {
	r  io.Reader
	wd *watchdog
}

func (w watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.wd.kick()
	}
	return n, err
}

// Stream is the body of a successful response, read line by line under the
// first-token and idle watchdog. It is not safe for concurrent use.
type Stream struct {
	// Header is the response's header.
	Header http.Header

	ctx, actx   context.Context
	cancel      context.CancelCauseFunc
	wd          *watchdog
	srv         *Server
	body        io.ReadCloser
	lines       *LineReader
	first, idle time.Duration
}

// ReadLine returns the next line of the body (see [LineReader.ReadLine]).
// At the clean end of the body it returns io.EOF. Otherwise errors are the
// caller's ctx.Err(), or a *runtime.ProviderError: ErrTimeout when the
// watchdog fired, ErrBadResponse for an oversized line, ErrInterrupted when
// the connection broke.
func (s *Stream) ReadLine() ([]byte, error) {
	line, err := s.lines.ReadLine()
	if err == nil {
		return line, nil
	}
	if e := s.timeoutOrCancel(); e != nil {
		return nil, e
	}
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case errors.Is(err, ErrLineTooLong):
		return nil, s.srv.BadResponse(err)
	}
	return nil, s.srv.Interrupted(err)
}

// timeoutOrCancel returns the caller's ctx error, a timeout error if the
// watchdog fired, or nil.
func (s *Stream) timeoutOrCancel() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	switch cause := context.Cause(s.actx); {
	case errors.Is(cause, errFirstByte):
		return s.srv.Err(runtime.ErrTimeout, 0, cause,
			"%s sent nothing for %s: the model may still be loading or be too big for this machine; try again or choose a smaller model",
			s.srv.Where(), s.first)
	case errors.Is(cause, errIdle):
		return s.srv.Err(runtime.ErrTimeout, 0, cause,
			"%s stopped sending for %s mid-answer: check that the server is healthy and try again",
			s.srv.Where(), s.idle)
	}
	return nil
}

// Close releases the response. It is safe to call more than once.
func (s *Stream) Close() error {
	s.wd.stop()
	var err error
	if s.body != nil {
		err = s.body.Close()
	}
	if s.lines != nil {
		s.lines.Release()
	}
	s.cancel(nil)
	return err
}

// Server returns the server description for building errors.
func (s *Stream) Server() *Server { return s.srv }
