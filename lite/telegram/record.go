package telegram

import (
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
