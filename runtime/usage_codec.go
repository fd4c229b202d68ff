package runtime

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// errUsageRecord is returned for a ledger value that does not decode.
var errUsageRecord = errors.New("damaged usage record")

// counters are a rollup's sums. input counts the whole prompt, the
// cached parts included; reasoning is part of output.
type counters struct {
	calls, input, output, cacheRead, cacheWrite, reasoning int64
}

func (c *counters) add(u Usage) {
	c.calls++
	c.input += int64(u.PromptTokens)
	c.output += int64(u.CompletionTokens)
	c.cacheRead += int64(u.CacheReadTokens)
	c.cacheWrite += int64(u.CacheWriteTokens)
	c.reasoning += int64(u.ReasoningTokens)
}

func (c *counters) merge(o counters) {
	c.calls += o.calls
	c.input += o.input
	c.output += o.output
	c.cacheRead += o.cacheRead
	c.cacheWrite += o.cacheWrite
	c.reasoning += o.reasoning
}

func (c *counters) fields() [6]*int64 {
	return [6]*int64{&c.calls, &c.input, &c.output, &c.cacheRead, &c.cacheWrite, &c.reasoning}
}

func (c counters) append(b []byte) []byte {
	for _, f := range c.fields() {
		b = binary.AppendUvarint(b, uint64(*f))
	}
	return b
}

// decodeCounters reads what append wrote; empty data is zero counters.
func decodeCounters(b []byte) (counters, error) {
	var c counters
	if len(b) == 0 {
		return c, nil
	}
	for _, f := range c.fields() {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxInt64/2 {
			return counters{}, errUsageRecord
		}
		*f, b = int64(v), b[n:]
	}
	return c, nil
}

// encodeCall is a raw record's value: the five counts as uvarints, then
// agent, model and provider, each a uvarint length and its bytes. The time
// and session are in the key.
func encodeCall(r *UsageRecord) []byte {
	u := r.Usage
	b := make([]byte, 0, 24+len(r.Agent)+len(r.Model)+len(r.Provider))
	for _, n := range [...]int{u.PromptTokens, u.CompletionTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens} {
		b = binary.AppendUvarint(b, uint64(max(n, 0)))
	}
	for _, s := range [...]string{r.Agent, r.Model, r.Provider} {
		s = clipUsage(s)
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeCall reads a raw record from its key and value.
func decodeCall(k, v []byte) (UsageRecord, error) {
	var r UsageRecord
	if len(k) < 16 {
		return r, errUsageRecord
	}
	r.Time = time.Unix(0, int64(binary.BigEndian.Uint64(k)))
	r.Session = string(k[16:])
	var n [5]int
	for i := range n {
		x, w := binary.Uvarint(v)
		if w <= 0 || x > math.MaxInt32 {
			return UsageRecord{}, errUsageRecord
		}
		n[i], v = int(x), v[w:]
	}
	r.Usage = Usage{PromptTokens: n[0], CompletionTokens: n[1], CacheReadTokens: n[2], CacheWriteTokens: n[3], ReasoningTokens: n[4]}
	for _, s := range [...]*string{&r.Agent, &r.Model, &r.Provider} {
		x, w := binary.Uvarint(v)
		if w <= 0 || x > maxUsageName || uint64(len(v)-w) < x {
			return UsageRecord{}, errUsageRecord
		}
		*s, v = string(v[w:w+int(x)]), v[w+int(x):]
	}
	return r, nil
}
