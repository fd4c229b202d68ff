package sched

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Schedules live in agnx.db's index space, scope "sched": kind "s" holds
// each schedule's JSON under its id, kind "r" its run log under
// id, 0, big-endian due (Unix nanoseconds), big-endian attempt, so that a
// prefix scan over id+0 reads one schedule's runs oldest first.
const (
	scope     = "sched"
	kindSched = "s"
	kindRuns  = "r"
	// runsKept is how many runs each schedule's log keeps; older ones are
	// pruned on write.
	runsKept = 100
)

// runKey is the run log key of the run of id due at due, try attempt.
func runKey(id string, due time.Time, attempt int) []byte {
	k := make([]byte, 0, len(id)+13)
	k = append(k, id...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(due.UnixNano()))
	return binary.BigEndian.AppendUint32(k, uint32(max(attempt, 0)))
}

// runPrefix is the prefix of all of id's run log keys.
func runPrefix(id string) []byte { return append([]byte(id), 0) }

// loadSchedule reads schedule id; ok is false when there is none.
func loadSchedule(tx *storage.Tx, id string) (sc Schedule, ok bool, err error) {
	if id == "" || len(id) > maxIDLen {
		return sc, false, nil
	}
	b, err := tx.IndexGet(scope, kindSched, []byte(id))
	if err != nil || b == nil {
		return sc, false, err
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return sc, false, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return sc, true, nil
}

// putSchedule writes sc's record (encoded before: see encodeSchedule).
func putSchedule(tx *storage.Tx, id string, b []byte) error {
	return tx.IndexPut(scope, kindSched, []byte(id), b)
}

func encodeSchedule(sc *Schedule) ([]byte, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("encode schedule %s: %w", sc.ID, err)
	}
	return b, nil
}

// scanSchedules calls fn for every stored schedule, in id order. A record
// that does not decode is passed over: one damaged record must not stop
// the others.
func scanSchedules(tx *storage.Tx, fn func(sc *Schedule) error) error {
	return tx.IndexScan(scope, kindSched, nil, func(_, v []byte) error {
		var sc Schedule
		if json.Unmarshal(v, &sc) != nil {
			return nil
		}
		return fn(&sc)
	})
}

// brief is what counting needs of a schedule; decoding only it is
// cheaper than the whole record.
type brief struct {
	ID     string    `json:"id"`
	Agent  string    `json:"agent"`
	Status Status    `json:"status"`
	Next   time.Time `json:"next"`
}

// scanBrief calls fn with the brief of every stored schedule.
func scanBrief(tx *storage.Tx, fn func(b *brief)) error {
	return tx.IndexScan(scope, kindSched, nil, func(_, v []byte) error {
		var b brief
		if json.Unmarshal(v, &b) == nil {
			fn(&b)
		}
		return nil
	})
}

// putRun appends r to id's run log and prunes it to the last runsKept.
func putRun(tx *storage.Tx, id string, r *Run) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run of %s: %w", id, err)
	}
	if err := tx.IndexPut(scope, kindRuns, runKey(id, r.Due, r.Attempt), b); err != nil {
		return err
	}
	return pruneRuns(tx, id)
}

// pruneRuns deletes the oldest of id's runs beyond runsKept.
func pruneRuns(tx *storage.Tx, id string) error {
	var keys [][]byte
	err := tx.IndexScan(scope, kindRuns, runPrefix(id), func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for len(keys) > runsKept {
		if err := tx.IndexDelete(scope, kindRuns, keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

// loadRuns returns id's logged runs, newest first.
func loadRuns(tx *storage.Tx, id string) ([]Run, error) {
	var runs []Run
	err := tx.IndexScan(scope, kindRuns, runPrefix(id), func(_, v []byte) error {
		var r Run
		if json.Unmarshal(v, &r) == nil {
			runs = append(runs, r)
		}
		return nil
	})
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs, err
}
