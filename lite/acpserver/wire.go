package acpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/valyala/fastjson"
)

// JSON-RPC error codes the guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternal       = -32603
)

// guard stands between the client's lines and the SDK's connection: the
// SDK logs and drops a line that is not JSON, and reads lines of up to
// 10 MiB. The guard answers such lines itself, bounds their length and
// the requests in flight, and passes only well-formed messages on.
type guard struct {
	out      *lineWriter
	maxLine  int
	maxFlyin int
	log      *slog.Logger
	p        fastjson.Parser
}

// run copies acceptable lines from in to sdk until in ends; it closes sdk
// with in's error (nil at EOF).
func (g *guard) run(in io.Reader, sdk *io.PipeWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		var err error
		var tooLong bool
		if cap(line) > 256<<10 {
			line = nil // a big prompt's buffer is not kept for the small lines after it
		}
		line, tooLong, err = readLine(r, line[:0], g.maxLine)
		if tooLong {
			g.refuse(idOf(line), codeInvalidRequest, "the message is over "+sizeText(g.maxLine)+
				": send less text in one prompt, or attach large files as resource links")
		} else if len(bytes.TrimSpace(line)) > 0 {
			if ok := g.check(line); ok {
				if _, werr := sdk.Write(append(line, '\n')); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			sdk.CloseWithError(err)
			return
		}
	}
}

// readLine appends the next line (without its newline) to buf. A line
// over max is read to its end and dropped: tooLong, with its first bytes
// in the result so the request's id can still be found.
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > max {
				tooLong = true
				buf = append(buf, frag[:min(len(frag), 4<<10)]...)
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), tooLong, err
	}
}

// check reports whether a line is a message the SDK can take; it answers
// the others.
func (g *guard) check(line []byte) bool {
	v, err := g.p.ParseBytes(line)
	if err != nil {
		g.refuse(nil, codeParseError, "the line is not JSON: send one JSON-RPC 2.0 message per line")
		return false
	}
	o, err := v.Object()
	if err != nil {
		g.refuse(nil, codeInvalidRequest, "send one JSON-RPC 2.0 object per line: batches and other values are not accepted")
		return false
	}
	id, method := o.Get("id"), o.Get("method")
	var idRaw []byte
	if id != nil {
		switch id.Type() {
		case fastjson.TypeString, fastjson.TypeNumber, fastjson.TypeNull:
			idRaw = id.MarshalTo(nil)
		default:
			g.refuse(nil, codeInvalidRequest, "the id must be a string or a number")
			return false
		}
	}
	switch {
	case method != nil && method.Type() != fastjson.TypeString:
		g.refuse(idRaw, codeInvalidRequest, "the method must be a string")
		return false
	case method == nil && id == nil:
		g.refuse(nil, codeInvalidRequest, "a message needs a method (a request or notification) or an id (a response)")
		return false
	case method == nil:
		if e := o.Get("error"); e != nil && e.Type() != fastjson.TypeObject {
			g.log.Warn("acp response with a malformed error dropped", "id", string(idRaw))
			return false
		}
		return true // a response to one of our requests
	case id == nil || id.Type() == fastjson.TypeNull:
		return true // a notification
	}
	if !g.out.take(g.maxFlyin) {
		g.refuse(idRaw, codeInternal, "too many requests at once: wait for answers before sending more")
		return false
	}
	return true
}

// refuse answers a line the SDK never sees; id nil is JSON null.
func (g *guard) refuse(id []byte, code int, msg string) {
	if id == nil {
		id = []byte("null")
	}
	b := make([]byte, 0, 128+len(msg))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, msg)
	b = append(b, "}}\n"...)
	g.log.Warn("acp message refused", "code", code, "why", msg)
	_, _ = g.out.writeRaw(b)
}

// idOf finds the id of a request too long to parse, from the start of the
// line: clients write it before the params. nil when not found.
func idOf(prefix []byte) []byte {
	i := bytes.Index(prefix, []byte(`"id"`))
	if i < 0 {
		return nil
	}
	if p := bytes.Index(prefix, []byte(`"params"`)); p >= 0 && p < i {
		return nil // an "id" inside the params
	}
	rest := bytes.TrimLeft(prefix[i+4:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	end := bytes.IndexAny(rest, ",}")
	if end <= 0 {
		return nil
	}
	id := bytes.TrimSpace(rest[:end])
	if fastjson.ValidateBytes(id) != nil || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		return nil
	}
	return id
}

// lineWriter writes whole lines to the client, the SDK's and the guard's,
// and counts the requests in flight: each answer the SDK writes ends one.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	flying int
	p      fastjson.Parser
}

// take counts a request in; false when max are in flight already.
func (w *lineWriter) take(max int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flying >= max {
		return false
	}
	w.flying++
	return true
}

// Write is the SDK's: one whole message per call.
func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if v, err := w.p.ParseBytes(b); err == nil && v.Get("method") == nil && v.Get("id") != nil && w.flying > 0 {
		w.flying--
	}
	return w.w.Write(b)
}

func (w *lineWriter) writeRaw(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}
