package anthropic

import (
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime"
)

// block returns the block an event's index names, which must have started.
func (d *decoder) block(v *fastjson.Value) (*block, error) {
	i := v.GetInt("index")
	if i < 0 || i >= len(d.blocks) || d.blocks[i].kind == kindNone {
		return nil, d.srv.BadResponse(fmt.Errorf("event for content block %d, which has not started", i))
	}
	return &d.blocks[i], nil
}

func (d *decoder) blockStart(v *fastjson.Value) error {
	i := v.GetInt("index")
	if i < 0 || i >= maxBlocks {
		return d.srv.BadResponse(fmt.Errorf("content block index %d out of range", i))
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, block{})
	}
	cb := v.Get("content_block")
	b := &d.blocks[i]
	*b = block{kind: kindOther}
	switch string(cb.GetStringBytes("type")) {
	case "text":
		b.kind = kindText
		return d.text(cb.GetStringBytes("text"))
	case "tool_use":
		b.kind, b.id, b.name = kindToolUse, string(cb.GetStringBytes("id")), string(cb.GetStringBytes("name"))
		if b.name == "" {
			return d.srv.BadResponse(fmt.Errorf("tool_use block %d has no name", i))
		}
		// Anthropic starts with "input": {} and streams the input; a
		// compatible server may send it whole here instead.
		if in := cb.Get("input"); in != nil && in.Type() == fastjson.TypeObject && in.GetObject().Len() > 0 {
			b.buf, b.whole = in.MarshalTo(b.buf), true
			d.size += len(b.buf)
		}
	case "thinking":
		b.kind = kindThinking
		b.sig = append(b.sig, cb.GetStringBytes("signature")...)
		return d.grow(b, cb.GetStringBytes("thinking"), true)
	case "redacted_thinking":
		b.kind, b.redacted = kindRedacted, string(cb.GetStringBytes("data"))
	}
	return nil
}

func (d *decoder) blockDelta(v *fastjson.Value) error {
	b, err := d.block(v)
	if err != nil {
		return err
	}
	delta := v.Get("delta")
	switch string(delta.GetStringBytes("type")) {
	case "text_delta":
		if b.kind == kindText {
			return d.text(delta.GetStringBytes("text"))
		}
	case "input_json_delta":
		if b.kind == kindToolUse {
			frag := delta.GetStringBytes("partial_json")
			if b.whole && len(frag) > 0 {
				b.buf, b.whole = b.buf[:0], false // streamed after all: the fragments win
			}
			return d.grow(b, frag, false)
		}
	case "thinking_delta":
		if b.kind == kindThinking {
			return d.grow(b, delta.GetStringBytes("thinking"), true)
		}
	case "signature_delta":
		if b.kind == kindThinking {
			b.sig = append(b.sig, delta.GetStringBytes("signature")...)
		}
	}
	return nil
}

// text adds visible answer text.
func (d *decoder) text(t []byte) error {
	if len(t) == 0 {
		return nil
	}
	if d.size += len(t); d.size > maxBytes {
		return d.srv.BadResponse(fmt.Errorf("answer longer than %d bytes", maxBytes))
	}
	s := string(t)
	d.content.WriteString(s)
	d.onDelta(runtime.Delta{Text: s})
	return nil
}

// grow adds tool input or thinking text to b; thinking also goes to
// onDelta, apart from the answer.
func (d *decoder) grow(b *block, t []byte, thinking bool) error {
	if len(t) == 0 {
		return nil
	}
	if d.size += len(t); d.size > maxBytes {
		return d.srv.BadResponse(fmt.Errorf("answer longer than %d bytes", maxBytes))
	}
	b.buf = append(b.buf, t...)
	if thinking {
		d.onDelta(runtime.Delta{Thinking: string(t)})
	}
	return nil
}
