package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"time"
)

// MessageID names an assistant message in Agnx's form, msg_<ULID>. It is
// derived from what the log keeps of the message (its session, seq and
// time) rather than stored: the same message has the same id in a live
// stream, a reply, GET .../messages and an export, across restarts, and
// logs written before ids existed have them too. The ULID's time part is
// the message's time (so ids sort as messages do); its random part is
// the first 80 bits of SHA-256(session id, seq).
func MessageID(sessionID string, seq uint64, at time.Time) string {
	h := sha256.New()
	h.Write([]byte(sessionID))
	h.Write([]byte{0})
	h.Write(strconv.AppendUint(nil, seq, 10))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var id [16]byte
	ms := uint64(max(at.UnixMilli(), 0))
	binary.BigEndian.PutUint64(id[:8], ms<<16) // 48 bits of time first
	copy(id[6:], sum[:10])
	return "msg_" + ulid(id)
}
