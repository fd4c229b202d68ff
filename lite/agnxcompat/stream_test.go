package agnxcompat

import (
	"errors"
	"fmt"
	"io"
)

// This file ports the parent's stream consumer
// (crates/duragent-client/src/client/stream.rs, AGNX-COMPAT §7).

// The parent's stream errors.
var (
	// errSSEStreamEnded is ClientError::SseStreamEnded: the body ended
	// without done, error or cancelled.
	errSSEStreamEnded = errors.New("sse stream ended unexpectedly (§7: EOF without done/error/cancelled)")
)

// sseParseError is ClientError::SseParseError: the client aborts the stream.
type sseParseError struct{ msg string }

func (e *sseParseError) Error() string { return "failed to parse sse event: " + e.msg + " (§7 abort)" }

// clientEvent is ClientStreamEvent.
type clientEvent struct {
	Kind      string // start token done cancelled error approval_required
	Content   string // token
	MessageID string // done
	Usage     *usage // done
	Message   string // error
	CallID    string // approval_required
	Command   string // approval_required
}

// usage is duragent_client::llm::Usage: three u32.
type usage struct {
	PromptTokens     *uint32 `json:"prompt_tokens" agnx:"req"`
	CompletionTokens *uint32 `json:"completion_tokens" agnx:"req"`
	TotalTokens      *uint32 `json:"total_tokens" agnx:"req"`
}

type tokenData struct {
	Content *string `json:"content" agnx:"req"`
}

type doneData struct {
	MessageID *string `json:"message_id" agnx:"req"`
	Usage     *usage  `json:"usage"`
}

type errorData struct {
	Message *string `json:"message" agnx:"req"`
}

type approvalRequiredData struct {
	CallID  *string `json:"call_id" agnx:"req"`
	Command *string `json:"command" agnx:"req"`
}

// parseClientEvent is parse_event: start and cancelled are not parsed, the
// others must match their struct, any other name (or none) aborts.
func parseClientEvent(ev sseEvent) (clientEvent, error) {
	name := ""
	if ev.Event != nil {
		name = *ev.Event
	}
	bad := func(err error) (clientEvent, error) {
		return clientEvent{}, &sseParseError{msg: fmt.Sprintf("event %q data %q: %v", name, ev.Data, err)}
	}
	switch name {
	case "start":
		return clientEvent{Kind: name}, nil
	case "cancelled":
		return clientEvent{Kind: name}, nil
	case "token":
		var d tokenData
		if err := decodeStrict([]byte(ev.Data), &d); err != nil {
			return bad(err)
		}
		return clientEvent{Kind: name, Content: *d.Content}, nil
	case "done":
		var d doneData
		if err := decodeStrict([]byte(ev.Data), &d); err != nil {
			return bad(err)
		}
		return clientEvent{Kind: name, MessageID: *d.MessageID, Usage: d.Usage}, nil
	case "error":
		var d errorData
		if err := decodeStrict([]byte(ev.Data), &d); err != nil {
			return bad(err)
		}
		return clientEvent{Kind: name, Message: *d.Message}, nil
	case "approval_required":
		var d approvalRequiredData
		if err := decodeStrict([]byte(ev.Data), &d); err != nil {
			return bad(err)
		}
		return clientEvent{Kind: name, CallID: *d.CallID, Command: *d.Command}, nil
	default:
		return clientEvent{}, &sseParseError{msg: fmt.Sprintf("Unknown event type: %s (data %q)", name, ev.Data)}
	}
}

// chunkSource yields a response body's network chunks; io.EOF ends it.
type chunkSource interface {
	nextChunk() ([]byte, error)
}

// streamResult is what the client saw of one stream.
type streamResult struct {
	Events  []clientEvent
	Err     error    // an sseParseError, errSSEStreamEnded or a read error
	Dropped int      // chunks the parent dropped as invalid UTF-8
	Chunks  [][]byte // the raw chunks, for failure messages
}

// consumeStream runs the parent's process_sse_stream over src. With
// likeCLI it stops where the CLI's stream_response stops (done, cancelled,
// error, approval_required) and reads no further; otherwise it reads to
// the end of the body, as the parent's stream task does.
func consumeStream(src chunkSource, likeCLI bool) streamResult {
	var (
		p      sseParser
		r      streamResult
		seenTD bool
	)
	handle := func(evs []sseEvent) bool {
		for _, ev := range evs {
			ce, err := parseClientEvent(ev)
			if err != nil {
				r.Err = err
				return true
			}
			r.Events = append(r.Events, ce)
			switch ce.Kind {
			case "done", "cancelled", "error":
				seenTD = true
				if likeCLI {
					return true
				}
			case "approval_required":
				if likeCLI {
					return true
				}
			}
		}
		return false
	}
	for {
		chunk, err := src.nextChunk()
		if len(chunk) > 0 {
			r.Chunks = append(r.Chunks, chunk)
			stop := handle(p.feed(chunk))
			r.Dropped = p.dropped
			if stop {
				return r
			}
		}
		if errors.Is(err, io.EOF) {
			if handle(p.finish()) {
				return r
			}
			if !seenTD {
				r.Err = errSSEStreamEnded
			}
			return r
		}
		if err != nil {
			r.Err = fmt.Errorf("reading the stream: %w", err)
			return r
		}
	}
}
