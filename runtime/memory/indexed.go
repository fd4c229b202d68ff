package memory

import "github.com/agnx-lite/agnx-lite/storage"

// IndexedSeq returns the last seq of the session that the agent's index
// has read (0 when it has read none, or its tables are of another layout
// and will be rebuilt from the log). Retention that discards events never
// removes those the index has not read yet.
func IndexedSeq(tx *storage.Tx, agent, sessionID string) (uint64, error) {
	scope := "mem/" + agent
	v, err := tx.IndexGet(scope, kindMeta, metaFormat)
	if err != nil || string(v) != format {
		return 0, err
	}
	rec, err := tx.IndexGet(scope, kindSess, []byte(sessionID))
	if err != nil || rec == nil {
		return 0, err
	}
	return uvarintOf(rec), nil
}
