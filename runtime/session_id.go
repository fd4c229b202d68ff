package runtime

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// SessionIDPrefix begins every new session id, as in Agnx: session_<ULID>.
// Ids made before it (16 hex digits) keep working.
const SessionIDPrefix = "session_"

// newSessionID returns session_<ULID> for a session created at t: 48 bits
// of milliseconds and 80 random bits, 26 characters that sort by time.
func newSessionID(t time.Time) string { return NewID(SessionIDPrefix, t) }

// NewID returns prefix followed by a ULID for t (sched_<ULID>, ...).
func NewID(prefix string, t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(max(t.UnixMilli(), 0))<<16)
	_, _ = rand.Read(b[6:])
	return prefix + ulid(b)
}

// ulid encodes 128 bits as a ULID's 26 Crockford base-32 digits, most
// significant first (the first digit holds the top 3 bits).
func ulid(id [16]byte) string {
	const digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = digits[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
