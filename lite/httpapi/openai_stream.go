package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
)

// stream answers with the turn as OpenAI's SSE: a first chunk with the
// role, a chunk per piece of the answer, a last chunk with finish_reason
// (then one with usage, when asked), then data: [DONE]. A turn that fails
// after the stream started sends OpenAI's error object as the last data.
// Unlike POST .../stream, nothing here is resumable: the turn goes on
// when the client leaves (on_disconnect decides), and it is in the
// session.
func (c *oaCall) stream(w http.ResponseWriter, r *http.Request, includeUsage bool) {
	sse := newSSE(w)
	send := func(data []byte) error { return sse.send(0, "", data) }
	if send(c.chunk(&oaOut{Role: "assistant", Content: new(string)}, nil, nil)) != nil {
		c.s.clientGone(c.sub, c.sid)
		return
	}
	c.ping = sse.keepAlive
	var out oaOutcome
	err := c.follow(r.Context(), &out, func(piece string) error {
		return send(c.chunk(&oaOut{Content: &piece}, nil, nil))
	})
	switch {
	case err == nil:
	case errors.Is(err, errClosing):
		_ = send(errorChunk(oaServer, "", err.Error()))
		return
	case errors.Is(err, errSubGone) && r.Context().Err() == nil:
		_ = send(errorChunk(oaServer, "", c.goneReason()))
		return
	default: // the client left, or stopped reading
		c.s.clientGone(c.sub, c.sid)
		return
	}
	if status, typ, code, msg := out.failure(); status != 0 {
		_ = send(errorChunk(typ, code, msg))
		return
	}
	if note := out.note(); note != "" && send(c.chunk(&oaOut{Content: &note}, nil, nil)) != nil {
		return
	}
	stop := "stop"
	if send(c.chunk(nil, &stop, nil)) != nil {
		return
	}
	if includeUsage {
		u := toUsage(out.usage)
		if send(c.chunk(nil, nil, &u)) != nil {
			return
		}
	}
	_ = send([]byte("[DONE]"))
}

// errorChunk is the data of an error in a stream: OpenAI's error object.
func errorChunk(typ, code, msg string) []byte {
	data, _ := json.Marshal(newOAError(typ, code, "", msg))
	return data
}
