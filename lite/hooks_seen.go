package lite

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Replay protection. A delivery's id is remembered in the transaction
// that stores its message (Input.Commit), so an acknowledged delivery is
// never lost and a replayed one never runs twice, even across a crash:
//
//	kv    hookseen/<hook>/<id>               {"at": ..., "session": ...}
//	index hookseen/<hook>  <BE unix secs><id>  (empty), the ids by age
//
// The index lets each delivery prune up to hookPrunePerDelivery ids older
// than hookSeenTTL, oldest first: bounded work per request, and the store
// holds what a week of deliveries left.
const (
	hookSeenTTL          = 7 * 24 * time.Hour
	hookPrunePerDelivery = 16
	hookSeenScope        = "hookseen"
)

// seenRecord is the value of a remembered delivery.
type seenRecord struct {
	At      time.Time `json:"at"`
	Session string    `json:"session"`
}

func seenKey(hook, id string) string { return hookSeenScope + "/" + hook + "/" + id }

func seenIndexKey(at time.Time, id string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.Unix())), id...)
}

var errStopScan = errors.New("stop")

// seenBefore reads, in one snapshot, whether the hook saw the delivery id
// (its record) and which of its ids have expired (index keys, at most
// hookPrunePerDelivery).
func seenBefore(tx *storage.Tx, hook, id string, now time.Time) (rec *seenRecord, expired [][]byte, err error) {
	if id != "" {
		data, err := tx.KV(seenKey(hook, id))
		if err != nil {
			return nil, nil, err
		}
		if data != nil {
			rec = &seenRecord{}
			_ = json.Unmarshal(data, rec) // unreadable: seen all the same
		}
	}
	cutoff := uint64(now.Add(-hookSeenTTL).Unix())
	err = tx.IndexScan(hookSeenScope, hook, nil, func(k, _ []byte) error {
		if len(k) < 8 || binary.BigEndian.Uint64(k) >= cutoff || len(expired) == hookPrunePerDelivery {
			return errStopScan
		}
		expired = append(expired, append([]byte(nil), k...))
		return nil
	})
	if errors.Is(err, errStopScan) {
		err = nil
	}
	return rec, expired, err
}

// rememberSeen returns the writes that go with the delivery's message:
// the expired ids go, the new one is remembered. They only put and
// delete, so running them twice (a retried commit) does no harm.
func rememberSeen(hook, id, sid string, now time.Time, expired [][]byte) func(*storage.Tx) error {
	val, _ := json.Marshal(seenRecord{At: now.UTC(), Session: sid})
	return func(tx *storage.Tx) error {
		for _, k := range expired {
			if err := tx.DeleteKV(seenKey(hook, string(k[8:]))); err != nil {
				return err
			}
			if err := tx.IndexDelete(hookSeenScope, hook, k); err != nil {
				return err
			}
		}
		if id == "" {
			return nil
		}
		if err := tx.PutKV(seenKey(hook, id), val); err != nil {
			return err
		}
		return tx.IndexAppend(hookSeenScope, hook, seenIndexKey(now, id), nil)
	}
}
