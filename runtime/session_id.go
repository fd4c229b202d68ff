package runtime

import (
	"crypto/rand"
	"time"
)

// SessionIDPrefix begins every new session id, as in Agnx: session_<ULID>.
// Ids made before it (16 hex digits) keep working.
const SessionIDPrefix = "session_"

// crockford is the ULID alphabet (Crockford's base 32).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newSessionID returns session_<ULID> for a session created at t: 48 bits
// of milliseconds and 80 random bits, 26 characters that sort by time.
func newSessionID(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	_, _ = rand.Read(b[6:])
	return SessionIDPrefix + sessionULID(b)
}

// sessionULID encodes 128 bits as 26 base-32 digits, most significant
// first (the first digit holds the top 3 bits).
func sessionULID(b [16]byte) string {
	var out [26]byte
	hi := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	lo := uint64(b[8])<<56 | uint64(b[9])<<48 | uint64(b[10])<<40 | uint64(b[11])<<32 |
		uint64(b[12])<<24 | uint64(b[13])<<16 | uint64(b[14])<<8 | uint64(b[15])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
