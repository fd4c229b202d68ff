package anthropic

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/agnx-lite/agnx-lite/runtime/llm"
	// Named apart from the tests' sse() stream builder.
	ssewire "github.com/agnx-lite/agnx-lite/runtime/sse"
)

// Bounds a broken or hostile stream cannot push the decoder past.
const (
	maxBlocks = 256      // content blocks in one message
	maxBytes  = 32 << 20 // text, thinking and tool input assembled
)

// The kinds of content block the decoder keeps; others are skipped.
type blockKind uint8

const (
	kindNone blockKind = iota
	kindText
	kindToolUse
	kindThinking
	kindRedacted
	kindOther // a block type this provider does not use (citations, server tools)
)

// block is a content block being assembled from deltas.
type block struct {
	kind     blockKind
	id, name string
	buf      []byte // tool input JSON or thinking text
	sig      []byte
	redacted string
	stopped  bool
	whole    bool // buf holds an input the start event sent whole
}

// decoder turns SSE lines into deltas and one final response. One decoder
// serves one stream; its parser and buffers are reused per event.
type decoder struct {
	srv     *llm.Server
	onDelta func(runtime.Delta)
	p       fastjson.Parser
	ev      ssewire.Parser
	blocks  []block
	content strings.Builder
	size    int
	usage   runtime.Usage
	input   int // input_tokens: the part of the prompt not in the cache
	stop    string
	started bool
}

func newDecoder(srv *llm.Server, onDelta func(runtime.Delta)) *decoder {
	if onDelta == nil {
		onDelta = func(runtime.Delta) {}
	}
	// An event may be as large as a line of the body, no larger.
	return &decoder{srv: srv, onDelta: onDelta, ev: ssewire.Parser{Max: llm.MaxLineBytes}}
}

// line feeds one SSE line. It reports done after message_stop.
func (d *decoder) line(b []byte) (done bool, err error) {
	ev, ok, err := d.ev.Line(b)
	if err != nil {
		return false, d.srv.BadResponse(err)
	}
	if !ok {
		return false, nil
	}
	return d.event(ev.Data)
}

// end is called at the end of the body. A stream whose message_delta gave
// a stop_reason is complete without message_stop; otherwise it broke off.
func (d *decoder) end() (*runtime.Response, error) {
	if ev, ok := d.ev.Flush(); ok {
		done, err := d.event(ev.Data)
		if err != nil {
			return nil, err
		}
		if done {
			return d.response()
		}
	}
	if d.stop == "" {
		return nil, d.srv.Interrupted(fmt.Errorf("stream ended without message_stop or stop_reason"))
	}
	return d.response()
}

func (d *decoder) event(data []byte) (bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false, nil
	}
	v, err := d.p.ParseBytes(data)
	if err != nil {
		return false, d.srv.BadResponse(fmt.Errorf("parse event: %w", err))
	}
	if v.Type() != fastjson.TypeObject {
		return false, d.srv.BadResponse(fmt.Errorf("event is a %s, not an object", v.Type()))
	}
	switch string(v.GetStringBytes("type")) {
	case "message_start":
		d.started = true
		d.readUsage(v.Get("message", "usage"))
	case "content_block_start":
		return false, d.blockStart(v)
	case "content_block_delta":
		return false, d.blockDelta(v)
	case "content_block_stop":
		if b, err := d.block(v); err == nil {
			b.stopped = true
		}
	case "message_delta":
		if r := v.GetStringBytes("delta", "stop_reason"); len(r) > 0 {
			d.stop = string(r)
		}
		d.readUsage(v.Get("usage"))
	case "message_stop":
		return true, nil
	case "error":
		return false, d.streamError(v)
	}
	return false, nil // ping, and event types added to the API later
}

// readUsage takes the counts u has. message_delta repeats some of
// message_start's (cumulative, never added): a count present replaces the
// one before. PromptTokens is the whole input, cached parts included.
func (d *decoder) readUsage(u *fastjson.Value) {
	if u == nil || u.Type() != fastjson.TypeObject {
		return
	}
	set := func(dst *int, key string) {
		if n := u.Get(key); n != nil && n.Type() == fastjson.TypeNumber {
			*dst = max(n.GetInt(), 0)
		}
	}
	set(&d.input, "input_tokens")
	set(&d.usage.CacheWriteTokens, "cache_creation_input_tokens")
	set(&d.usage.CacheReadTokens, "cache_read_input_tokens")
	set(&d.usage.CompletionTokens, "output_tokens")
	d.usage.PromptTokens = d.input + d.usage.CacheWriteTokens + d.usage.CacheReadTokens
}
