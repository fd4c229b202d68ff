package telegram

import (
	"context"
	"encoding/json"
	"fmt"
)

// outRecord is a session's outbox position, kept in kv under outKey.
// Delivered is the last seq handled; Delivering, when set, is a seq whose
// send began and may have reached the chat (it is never sent again);
// Preview is the message a reply is being streamed into.
type outRecord struct {
	Chat       int64  `json:"chat"`
	Delivered  uint64 `json:"delivered"`
	Delivering uint64 `json:"delivering,omitempty"`
	Preview    int64  `json:"preview,omitempty"`
}

func outKey(sid string) string { return "telegram/out/" + sid }

// open makes sure sid has an outbox record before a message from chat is
// sent to it. A session without one (its first message from Telegram is
// on its way) starts at its current end: what was said before is not this
// chat's to receive. Only a session without a record gets one here, and a
// watcher runs only for a session with one, so no watcher writes it too.
func (o *outbox) open(ctx context.Context, sid string, chat int64) error {
	if _, ok, err := o.readRecord(sid); err != nil || ok {
		return err
	}
	info, err := o.o.Loop.Session(ctx, sid)
	if err != nil {
		return err
	}
	return o.putRecord(sid, outRecord{Chat: chat, Delivered: info.LastSeq})
}

// readRecord reads sid's outbox record; ok is false when it has none.
func (o *outbox) readRecord(sid string) (r outRecord, ok bool, err error) {
	data, err := o.o.Chats.KV(outKey(sid))
	if err != nil || data == nil {
		return r, false, err
	}
	if json.Unmarshal(data, &r) != nil || r.Chat == 0 {
		return outRecord{}, false, nil
	}
	return r, true, nil
}

// putRecord writes sid's outbox record in the loop's next group commit.
func (o *outbox) putRecord(sid string, r outRecord) error {
	data, _ := json.Marshal(r)
	if err := o.o.Chats.PutKV(outKey(sid), data); err != nil {
		return fmt.Errorf("telegram outbox of session %s: %w", sid, err)
	}
	return nil
}
