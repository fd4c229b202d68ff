package runtime

import (
	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
)

// Compaction is what a history_compaction event records.
type Compaction struct {
	// Upto is the new start of the window: the messages of the events
	// with seq >= Upto stay. It is always just after a turn_end.
	Upto uint64
	// Method is CompactSummary or CompactTrim.
	Method string
	// CoversFrom and CoversTo are the seqs whose messages left the
	// window (a summary stands for them).
	CoversFrom, CoversTo uint64
	// TokensBefore and TokensAfter are the window's estimated size.
	TokensBefore, TokensAfter int
}

// Compaction methods, the Method of a history_compaction event and of a
// CompactResult.
const (
	// CompactSummary: the model summarised the older messages.
	CompactSummary = "summary"
	// CompactTrim: the older messages were dropped without a summary.
	CompactTrim = "trim"
	// CompactNone: nothing was compacted (CompactResult only).
	CompactNone = "none"
)

func (e *Event) appendCompaction(w *jsonw.Writer) {
	c := e.Compaction
	if c == nil {
		c = &Compaction{}
	}
	w.Key("upto").Uint(c.Upto)
	w.Key("content").String(e.Content)
	w.Key("method").String(c.Method)
	w.Key("covers_from").Uint(c.CoversFrom)
	w.Key("covers_to").Uint(c.CoversTo)
	w.Key("tokens_before").Int(int64(c.TokensBefore))
	w.Key("tokens_after").Int(int64(c.TokensAfter))
	if e.Usage != (Usage{}) {
		writeUsage(w.Key("usage"), e.Usage)
	}
}

// decodeCompaction reads what appendCompaction wrote. Fields of the wrong
// type read as zero; apply ignores a compaction whose Upto it cannot find.
func (e *Event) decodeCompaction(v *fastjson.Value) {
	e.Content = string(v.GetStringBytes("content"))
	e.Compaction = &Compaction{
		Upto:         v.GetUint64("upto"),
		Method:       string(v.GetStringBytes("method")),
		CoversFrom:   v.GetUint64("covers_from"),
		CoversTo:     v.GetUint64("covers_to"),
		TokensBefore: v.GetInt("tokens_before"),
		TokensAfter:  v.GetInt("tokens_after"),
	}
	if u := v.Get("usage"); u != nil {
		e.Usage = readUsage(u)
	}
}
