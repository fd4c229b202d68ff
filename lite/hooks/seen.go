package hooks

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/agnx-lite/agnx-lite/lite/config"
	"github.com/agnx-lite/agnx-lite/storage"
)

// Replay protection. A delivery's id, and for a signed hook the digest
// of its body, are remembered in the transaction that stores its message
// (Input.Commit), so an acknowledged delivery is never lost and a
// replayed one never runs twice, even across a crash:
//
//	kv    hookseen/<hook>/<key>               {"at": ..., "session": ...}
//	index hookseen/<hook>  <BE unix secs><key>  (empty), the keys by age
//
// where key is the delivery id, or "sha256 <hex>" for a body's digest
// (the space keeps it apart from every id, which are visible ASCII). The
// digest matters because the signature covers the body only: a captured
// delivery sent again with a new, or no, delivery id is still the same
// signed body. The index lets each delivery prune up to
// hookPrunePerDelivery keys older than ReplayWindow, oldest first: bounded
// work per request, and the store holds what a week of deliveries left
// (two keys each, at most max_per_minute deliveries a minute).
const (
	hookPrunePerDelivery = 16
	hookSeenScope        = "hookseen"
)

// ReplayWindow is how long a delivery's id, and a signed body's digest,
// are remembered: the same delivery sent again within it runs nothing.
const ReplayWindow = 7 * 24 * time.Hour

// seenRecord is the value of a remembered delivery.
type seenRecord struct {
	At      time.Time `json:"at"`
	Session string    `json:"session"`
}

func seenKey(hook, key string) string { return hookSeenScope + "/" + hook + "/" + key }

func seenIndexKey(at time.Time, key string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.Unix())), key...)
}

// delivery is what a delivery is remembered by: its id ("" for none) and
// its body's digest key ("" for a hook with a token, whose body no
// signature binds).
type delivery struct{ id, digest string }

// keys are the delivery's non-empty keys.
func (d delivery) keys() []string {
	var out []string
	for _, k := range []string{d.id, d.digest} {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

// bodyDigest is the digest key of a signed hook's body, "" for a token
// hook: anyone holding its token can send any body, so a body's digest
// proves nothing there, and a sender may send the same body twice.
func bodyDigest(c *config.Hook, body []byte) string {
	if !c.Signed {
		return ""
	}
	sum := sha256.Sum256(body)
	return "sha256 " + hex.EncodeToString(sum[:])
}

var errStopScan = errors.New("stop")

// seenBefore reads, in one snapshot, whether the hook saw the delivery
// (by its id or its body's digest: the first record found) and which of
// its keys have expired (index keys, at most hookPrunePerDelivery).
func seenBefore(tx *storage.Tx, hook string, d delivery, now time.Time) (rec *seenRecord, expired [][]byte, err error) {
	for _, k := range d.keys() {
		data, err := tx.KV(seenKey(hook, k))
		if err != nil {
			return nil, nil, err
		}
		if data != nil {
			rec = &seenRecord{}
			_ = json.Unmarshal(data, rec) // unreadable: seen all the same
			break
		}
	}
	cutoff := uint64(now.Add(-ReplayWindow).Unix())
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
// the expired keys go, the new ones are remembered. They only put and
// delete, so running them twice (a retried commit) does no harm.
func rememberSeen(hook string, d delivery, sid string, now time.Time, expired [][]byte) func(*storage.Tx) error {
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
		for _, k := range d.keys() {
			if err := tx.PutKV(seenKey(hook, k), val); err != nil {
				return err
			}
			if err := tx.IndexAppend(hookSeenScope, hook, seenIndexKey(now, k), nil); err != nil {
				return err
			}
		}
		return nil
	}
}
