package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// Defaults for [Options].
const (
	DefaultMaxAttempts       = 4
	DefaultBackoffBase       = 500 * time.Millisecond
	DefaultBackoffCap        = 30 * time.Second
	DefaultMaxRetryAfter     = 60 * time.Second
	DefaultFirstTokenTimeout = 120 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// Options tune the HTTP plumbing of a provider. The zero value means the
// defaults; a negative timeout disables that timeout.
type Options struct {
	// HTTPClient is used as is when set; nil means NewHTTPClient with
	// ConnectTimeout. It must have no Timeout (streams are long).
	HTTPClient     *http.Client
	ConnectTimeout time.Duration
	// MaxAttempts counts the first try: 1 disables retries.
	MaxAttempts int
	// BackoffBase and BackoffCap shape the full-jitter backoff.
	BackoffBase, BackoffCap time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a server asking
	// for a longer wait gets no retry and the caller sees ErrRateLimited.
	MaxRetryAfter time.Duration
	// FirstTokenTimeout bounds the wait from sending the request to the
	// first byte of the body; local models may need long to load.
	FirstTokenTimeout time.Duration
	// IdleTimeout bounds the silence between two reads of the body.
	IdleTimeout time.Duration
	// Sleep waits between attempts; nil uses a timer. Tests inject a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger gets one warning per retry; nil discards.
	Logger *slog.Logger
}

// Client sends requests to one server with retries and timeouts. It is safe
// for concurrent use.
type Client struct {
	srv           Server
	http          *http.Client
	attempts      int
	bo            backoff
	maxRetryAfter time.Duration
	first, idle   time.Duration
	sleep         func(context.Context, time.Duration) error
	log           *slog.Logger
}

// New returns a Client for srv with o's settings.
func New(srv Server, o Options) *Client {
	c := &Client{
		srv:           srv,
		http:          o.HTTPClient,
		attempts:      orDefault(o.MaxAttempts, DefaultMaxAttempts),
		bo:            backoff{orDefault(o.BackoffBase, DefaultBackoffBase), orDefault(o.BackoffCap, DefaultBackoffCap)},
		maxRetryAfter: orDefault(o.MaxRetryAfter, DefaultMaxRetryAfter),
		first:         orDefault(o.FirstTokenTimeout, DefaultFirstTokenTimeout),
		idle:          orDefault(o.IdleTimeout, DefaultIdleTimeout),
		sleep:         o.Sleep,
		log:           o.Logger,
	}
	if c.http == nil {
		c.http = NewHTTPClient(o.ConnectTimeout)
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Server returns the server description the client reports errors with.
func (c *Client) Server() *Server { return &c.srv }

// Do sends the request build makes until it gets a 2xx response, and
// returns its body as a Stream. build is called once per attempt, so it
// must return a fresh request (with a fresh body) each time.
//
// Do retries a failed connection, 429 and 5xx, sleeping a full-jitter
// backoff or the server's Retry-After between attempts. Other statuses
// become a *runtime.ProviderError at once. If ctx ends, Do returns
// ctx.Err().
func (c *Client) Do(ctx context.Context, build func() (*http.Request, error)) (*Stream, error) {
	for retry := 0; ; retry++ {
		s, wait, err := c.attempt(ctx, build)
		if err == nil {
			return s, nil
		}
		var pe *runtime.ProviderError
		if !errors.As(err, &pe) || !retryable(pe) || retry+1 >= c.attempts {
			return nil, err
		}
		delay := c.bo.delay(retry)
		if wait >= 0 {
			if wait > c.maxRetryAfter {
				return nil, err
			}
			delay = wait
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "llm retry",
			slog.String("provider", c.srv.Provider), slog.Int("status", pe.Status),
			slog.Int("attempt", retry+1), slog.Duration("delay", delay),
			slog.String("error", fmt.Sprint(pe.Err)))
		if err := c.sleep(ctx, delay); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
}

func retryable(pe *runtime.ProviderError) bool {
	switch pe.Kind {
	case runtime.ErrUnreachable, runtime.ErrRateLimited:
		return true
	case runtime.ErrServer:
		return pe.Status != http.StatusNotImplemented && pe.Status != http.StatusHTTPVersionNotSupported
	}
	return false
}

// attempt makes one request. wait is the server's Retry-After, or -1.
func (c *Client) attempt(ctx context.Context, build func() (*http.Request, error)) (s *Stream, wait time.Duration, err error) {
	req, err := build()
	if err != nil {
		return nil, -1, fmt.Errorf("%s: build request: %w", c.srv.Provider, err)
	}
	actx, cancel := context.WithCancelCause(ctx)
	wd := startWatchdog(cancel, c.first, c.idle)
	s = &Stream{ctx: ctx, actx: actx, cancel: cancel, wd: wd, srv: &c.srv, first: c.first, idle: c.idle}
	resp, err := c.http.Do(req.WithContext(actx))
	if err != nil {
		s.Close()
		if e := s.timeoutOrCancel(); e != nil {
			return nil, -1, e
		}
		return nil, -1, c.srv.transportError(err)
	}
	s.body = resp.Body
	s.Header = resp.Header
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		s.lines = NewLineReader(watchedReader{resp.Body, wd}, 0)
		return s, -1, nil
	}
	defer s.Close()
	msg := ReadErrorMessage(watchedReader{resp.Body, wd})
	if ctx.Err() != nil {
		return nil, -1, ctx.Err()
	}
	wait = -1
	if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		wait = d
	}
	classify := c.srv.Classify
	if classify == nil {
		classify = c.srv.StatusError
	}
	return nil, wait, classify(resp.StatusCode, msg)
}
