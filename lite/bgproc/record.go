package bgproc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Status is where a process is in its life.
type Status string

// The statuses a process reports.
const (
	Running  Status = "running"
	Exited   Status = "exited"    // it ended by itself; see ExitCode
	Killed   Status = "killed"    // the kill action ended it
	TimedOut Status = "timed_out" // timeout_seconds ended it
	Lost     Status = "lost"      // the daemon stopped while it ran
)

// Record is what the registry keeps of one process.
type Record struct {
	Handle   string    `json:"handle"`
	Agent    string    `json:"agent"`
	Session  string    `json:"session_id"`
	Command  string    `json:"command"`
	Label    string    `json:"label,omitempty"`
	Workdir  string    `json:"workdir,omitempty"`
	Pid      int       `json:"pid,omitempty"`
	Status   Status    `json:"status"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Started  time.Time `json:"spawned_at"`
	Ended    time.Time `json:"completed_at,omitzero"`
	Timeout  int       `json:"timeout_seconds"`
	// Log is the log file's path relative to the agent's workspace.
	Log         string `json:"log_path"`
	Interactive bool   `json:"interactive,omitempty"`
	// Workspace is the agent's workspace on the host, where Log is.
	Workspace string `json:"workspace"`
}

// Store is where the registry lives: *runtime.Loop (its group commit and
// reads).
type Store interface {
	Commit(ctx context.Context, fn func(*storage.Tx) error) error
	View(fn func(*storage.Tx) error) error
}

// The registry's place in the index space.
const (
	scope = "proc"
	kind  = "handles"
)

// maxRecord bounds one stored record (a command is at most maxCommand).
const maxRecord = 64 << 10

func putRecord(r Record) (func(*storage.Tx) error, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode process record: %w", err)
	}
	return func(tx *storage.Tx) error { return tx.IndexPut(scope, kind, []byte(r.Handle), b) }, nil
}

func deleteRecords(handles []string) func(*storage.Tx) error {
	return func(tx *storage.Tx) error {
		for _, h := range handles {
			if err := tx.IndexDelete(scope, kind, []byte(h)); err != nil {
				return err
			}
		}
		return nil
	}
}

// decodeRecord reads a stored record; a damaged one is an error, never a
// panic.
func decodeRecord(v []byte) (Record, error) {
	var r Record
	if len(v) > maxRecord {
		return r, fmt.Errorf("process record of %d bytes is too big", len(v))
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("decode process record: %w", err)
	}
	if r.Handle == "" {
		return r, fmt.Errorf("process record without a handle")
	}
	return r, nil
}

func getRecord(st Store, handle string) (Record, bool, error) {
	var v []byte
	err := st.View(func(tx *storage.Tx) error {
		var err error
		v, err = tx.IndexGet(scope, kind, []byte(handle))
		return err
	})
	if err != nil || v == nil {
		return Record{}, false, err
	}
	r, err := decodeRecord(v)
	return r, err == nil, err
}

// scanRecords calls fn for every readable record; damaged ones are
// skipped.
func scanRecords(st Store, fn func(Record)) error {
	return st.View(func(tx *storage.Tx) error {
		return tx.IndexScan(scope, kind, nil, func(_, v []byte) error {
			if r, err := decodeRecord(v); err == nil {
				fn(r)
			}
			return nil
		})
	})
}
