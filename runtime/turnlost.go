package runtime

import (
	"fmt"

	"github.com/agnx-lite/agnx-lite/storage"
)

// ErrDiskFull is matched (errors.Is) by the error of a call whose commit
// found the disk full: nothing the call would have stored was stored, so
// it may be made again once there is space. (Gateways do not import the
// store: this is its sentinel.)
var ErrDiskFull = storage.ErrDiskFull

// A message is stored and acknowledged before its turn runs, so when a
// later commit of the turn finds the disk full, the client that sent it is
// told the turn failed, but the message stays. A client that takes that
// failure for "not stored" and sends the message again would store it a
// second time. So the session remembers the message of a turn a failed
// commit ended (lostTurn, set when the turn is settled, see loadFailed),
// and if the next message to the session is that same text again, Send
// stores nothing and answers TurnLostError: the resend is idempotent.
// Only the next message is compared, and only in memory: a resend after a
// restart, or after another message, is a new message.

// lostTurn is the message of a turn a failed commit ended.
type lostTurn struct {
	seq     uint64
	content string
	why     error
}

// TurnLostError is Send's error for a message sent again after its turn
// failed because the disk filled up: it is stored already, at Seq, so it
// was not stored twice.
type TurnLostError struct {
	Seq uint64
	// Why is what made the turn fail (the disk-full sentence).
	Why error
}

func (e *TurnLostError) Error() string {
	return fmt.Sprintf("this message is stored already (seq %d) and its turn failed when the disk filled up, so it was not stored again: "+
		"free some space, then send your next message", e.Seq)
}

// lastUser is the text of the last user message in the session's history.
func lastUser(st *state) string {
	for i := len(st.History) - 1; i >= 0; i-- {
		if st.History[i].Role == RoleUser {
			return st.History[i].Content
		}
	}
	return ""
}
