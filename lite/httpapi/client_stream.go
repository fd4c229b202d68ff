package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/sse"
)

// Stream sends a message and calls fn with each event of the turn it
// starts (POST .../stream), until the turn ends. When the connection drops
// before that, it resumes from the log (GET .../events with Last-Event-ID
// set to the last seq it saw), so fn sees every durable event once, in
// order. Tokens stream as they come; after a reconnection they are held
// back until a model round is seen whole (see Events), so the tokens fn
// sees of a round are always the beginning of its final message. An
// error from fn stops the stream and is returned.
//
// The client asks for lite's events (?events=all, see sse_view.go).
// Events reach fn as runtime events: tokens (Seq 0), assistant_response
// (with its tool calls), tool_call, tool_result, error, user_message and
// turn_end (Reason completed, failed, cancelled, interrupted or paused;
// Usage for the turn). The SSE start event is not passed on.
//
// # Caveats
//
// A message queued behind another client's running turn is answered after
// that turn's turn_end; if the connection drops in between, the resumed
// stream ends at the first turn_end.
func (c *Client) Stream(ctx context.Context, id, content string, fn func(runtime.Event) error) error {
	resp, err := c.open(ctx, request{method: "POST", path: sessionPath(id) + "/stream?events=all",
		body: c.message(content), accept: "text/event-stream"})
	if err != nil {
		return err
	}
	f := &follower{fn: fn, mode: untilEOF}
	err = f.read(resp.Body)
	resp.Body.Close()
	if f.fnErr != nil {
		return f.fnErr
	}
	if f.last == 0 {
		// Not even the start event: the message may or may not be stored.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the connection to the daemon at %s dropped before it acknowledged the message (%v): see the session's messages before sending again", c.base, orEOF(err))
	}
	if f.sawEnd && ctx.Err() == nil {
		return nil // the server ends the stream after the turn's end
	}
	f.mode = untilTurnEnd
	return c.resume(ctx, id, f, err)
}

// Events calls fn with the session's events after seq `after` (0: from the
// start): first those in the log, then live ones. With untilEnd it
// returns after the next turn_end; without, it follows the session until
// ctx ends and returns ctx.Err(). A dropped connection is resumed as in
// Stream.
//
// The tokens of the model round running when the stream opens were partly
// sent before it: fn gets no tokens until one round's tokens add up to its
// final message, and the final message of each round before that carries
// its whole text.
func (c *Client) Events(ctx context.Context, id string, after uint64, untilEnd bool, fn func(runtime.Event) error) error {
	f := &follower{fn: fn, last: after, mode: forever, holding: true}
	if untilEnd {
		f.mode = untilTurnEnd
	}
	resp, err := c.openEvents(ctx, id, f)
	if err != nil {
		return err
	}
	err = f.read(resp.Body)
	resp.Body.Close()
	if f.fnErr != nil || f.done {
		return f.fnErr
	}
	return c.resume(ctx, id, f, err)
}

func (c *Client) openEvents(ctx context.Context, id string, f *follower) (*http.Response, error) {
	path := sessionPath(id) + "/events?events=all"
	if f.mode == untilTurnEnd {
		path += "&until=turn_end"
	}
	r := request{method: "GET", path: path, accept: "text/event-stream"}
	if f.last > 0 {
		r.lastEventID = strconv.FormatUint(f.last, 10)
	}
	return c.open(ctx, r)
}

// resume reopens a dropped stream from f.last until it ends, ctx ends, fn
// fails or Resumes attempts in a row bring nothing.
func (c *Client) resume(ctx context.Context, id string, f *follower, err error) error {
	misses := 0
	for !f.done {
		if f.fnErr != nil {
			return f.fnErr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if f.progress {
			misses = 0
		}
		f.progress = false
		if misses++; misses > c.o.Resumes {
			return fmt.Errorf("the event stream from the daemon at %s dropped and %d attempts to resume it failed: %w", c.base, c.o.Resumes, orEOF(err))
		}
		if misses > 1 {
			t := time.NewTimer(min(100*time.Millisecond<<(misses-2), 2*time.Second))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		f.holding = true
		resp, oerr := c.openEvents(ctx, id, f)
		if oerr != nil {
			var pe *ProblemError
			if errors.As(oerr, &pe) && pe.Status < 500 {
				return oerr // the session is gone, or we may not read it
			}
			err = oerr
			continue
		}
		err = f.read(resp.Body)
		resp.Body.Close()
	}
	return f.fnErr
}

func orEOF(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// followMode says when a stream is over.
type followMode int

const (
	untilEOF     followMode = iota // POST stream: the server closes it after the turn
	untilTurnEnd                   // over at the first turn_end
	forever                        // over when ctx ends
)

// follower delivers one logical stream's events across reconnections.
type follower struct {
	fn   func(runtime.Event) error
	mode followMode
	// last is the last seq seen: the resume point.
	last   uint64
	sawEnd bool // a turn_end was delivered
	// holding is true on a GET .../events stream until a model round is
	// seen whole: the round running when the server subscribed us has
	// lost its first tokens, and tokens cannot say which round they are
	// of. While holding, tokens are kept back in held and dropped when
	// the round's final message (which has the whole text) comes; a round
	// whose tokens add up to its message proves the stream live.
	holding  bool
	held     strings.Builder
	done     bool // untilTurnEnd: the turn_end was delivered
	progress bool // the last read delivered something
	fnErr    error
}

// read delivers the events of one response body until it ends (nil), a
// read fails (that error), fn fails (f.fnErr) or the stream is done.
func (f *follower) read(body io.Reader) error {
	p := sse.NewReader(body, 0)
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		e, known, err := decodeSSE(ev)
		if err != nil {
			return err
		}
		f.progress = true
		if f.holding && f.hold(&e) {
			continue
		}
		if e.Seq > 0 {
			if e.Seq <= f.last {
				continue // already delivered before a reconnection
			}
			f.last = e.Seq
		}
		if !known {
			continue
		}
		if err := f.fn(e); err != nil {
			f.fnErr = err
			return nil
		}
		if e.Type == runtime.EvTurnEnd {
			f.sawEnd = true
			if f.mode == untilTurnEnd {
				f.done = true
				return nil
			}
		}
	}
}

// hold keeps a token back (true) or, for a final message, checks whether
// the tokens kept back were the whole round.
func (f *follower) hold(e *runtime.Event) bool {
	switch e.Type {
	case runtime.EvToken:
		f.held.WriteString(e.Content)
		return true
	case runtime.EvAssistant:
		if e.Origin != "" {
			return false // a notice: the round's tokens stay held
		}
		f.holding = f.held.Len() == 0 || f.held.String() != e.Content
		f.held.Reset()
	case runtime.EvTurnEnd:
		f.held.Reset()
	case runtime.EvSessionStart, runtime.EvUserMessage, runtime.EvToolCall, runtime.EvToolResult,
		runtime.EvToolProgress, runtime.EvApprovalRequired, runtime.EvApprovalDecision,
		runtime.EvError, runtime.EvSessionEnd, runtime.EvSilentMessage, runtime.EvHistoryCompaction:
		// They pass: only tokens are held back.
	}
	return false
}
