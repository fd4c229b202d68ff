package runtime

import (
	"errors"
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/agnx-lite/agnx-lite/runtime/jsonw"
	"github.com/agnx-lite/agnx-lite/storage"
)

// A session loaded from a version 1 checkpoint has its history in the
// checkpoint and WindowSeq 0: the log it came from was trimmed in a way
// replay cannot reproduce. Its checkpoints keep carrying the history, and
// its marks, until its first history_compaction sets WindowSeq; from then
// on they carry neither.

// writeLegacyHistory writes the history and marks of a legacy session.
func (s *state) writeLegacyHistory(w *jsonw.Writer) {
	writeMessages(w.Key("history"), s.History)
	if len(s.marks) == 0 {
		return
	}
	w.Key("marks").Array()
	for _, m := range s.marks {
		w.Array().Int(int64(m.at)).Uint(m.seq).EndArray()
	}
	w.EndArray()
}

// readLegacyHistory reads what writeLegacyHistory wrote; marks that do
// not fit the history are dropped.
func (s *state) readLegacyHistory(v *fastjson.Value) {
	s.History = decodeMessages(v.GetArray("history"))
	for i := range s.History {
		s.HistTokens += estimateTokens(&s.History[i])
	}
	s.HistTokens += summaryTokens(s.Summary)
	for _, m := range v.GetArray("marks") {
		at, seq := m.GetInt("0"), m.GetUint64("1")
		if at >= 0 && at <= len(s.History) && seq > 0 {
			s.marks = append(s.marks, mark{at: at, seq: seq})
		}
	}
}

// errReplayed stops the replay of the window at the checkpoint's seq.
var errReplayed = errors.New("window replayed")

// maxWindowHint bounds the slots replayWindow sets aside before replaying.
const maxWindowHint = 4096

// replayWindow rebuilds the history of a checkpoint that does not hold
// it: the events from WindowSeq to the checkpoint's seq, folded into a
// scratch state, give History and the marks; the checkpoint's own fields
// stay for everything else.
func (s *state) replayWindow(tx *storage.Tx, p *fastjson.Parser) error {
	if s.WindowSeq == 0 {
		return nil
	}
	scratch := &state{WindowSeq: s.WindowSeq}
	// One allocation for the window instead of the doublings of appending
	// (the checkpoint's count is only a hint, so it is bounded).
	if n := min(s.windowLen, maxWindowHint); n > 0 {
		scratch.History = make([]Message, 0, n)
	}
	err := tx.Events(s.ID, s.WindowSeq-1, func(seq uint64, data []byte) error {
		if seq > s.LastSeq {
			return errReplayed
		}
		e, err := DecodeEvent(p, data)
		if err != nil {
			return fmt.Errorf("session %s event %d: %w", s.ID, seq, err)
		}
		scratch.apply(&e)
		return nil
	})
	if err != nil && !errors.Is(err, errReplayed) {
		return err
	}
	s.History, s.marks = scratch.History, scratch.marks
	s.HistTokens = summaryTokens(s.Summary)
	for i := range s.History {
		s.HistTokens += estimateTokens(&s.History[i])
	}
	return nil
}
