package workers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// KV is where job records live: the runtime.Loop's kv (each write shares
// the loop's group commit), or a store in tests. PutKV with a nil value
// deletes.
type KV interface {
	KV(ctx context.Context, key string) ([]byte, error)
	PutKV(ctx context.Context, key string, val []byte) error
}

// Status is where a job stands.
type Status string

// A job is running while its worker works, awaiting_review once it
// stopped, then approved, rejected or failed for good. One found running
// by a daemon that did not start it (the one that did died) is
// interrupted: its staging is kept and reject with feedback runs it
// again.
const (
	StatusRunning     Status = "running"
	StatusReview      Status = "awaiting_review"
	StatusApproved    Status = "approved"
	StatusRejected    Status = "rejected"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
)

// Final reports whether s is an end: the staging is gone.
func (s Status) Final() bool {
	return s == StatusApproved || s == StatusRejected || s == StatusFailed
}

// Attempt is one run of the worker on a job.
type Attempt struct {
	N       int       `json:"n"`
	Prompt  string    `json:"prompt"` // the task, or the feedback (bounded)
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Stop    string    `json:"stop,omitempty"`
	Result  string    `json:"result,omitempty"` // the worker's final message (bounded)
	Error   string    `json:"error,omitempty"`
}

// Record is a job's durable record, kv workers/<id>.
type Record struct {
	ID        string `json:"id"`
	Worker    string `json:"worker"`
	Agent     string `json:"agent"`
	Session   string `json:"session"`
	Gateway   string `json:"gateway,omitempty"`
	ChatID    string `json:"chat_id,omitempty"`
	Workspace string `json:"workspace"`
	// Dir is the job's folder: work/ (the staging the worker edits) and
	// base (the workspace's files as copied).
	Dir string `json:"dir"`
	// WorkerSession is the worker's own session id, for resuming it.
	WorkerSession string    `json:"worker_session,omitempty"`
	MaxAttempts   int       `json:"max_attempts"`
	Status        Status    `json:"status"`
	Attempts      []Attempt `json:"attempts"`
	Created       time.Time `json:"created"`
	Updated       time.Time `json:"updated"`
}

// Bounds of records.
const (
	maxPromptKept = 2 << 10
	maxResultKept = 4 << 10
	// maxListed is how many of an agent's jobs its list keeps; older
	// finished jobs are forgotten.
	maxListed = 100
)

func recordKey(id string) string    { return "workers/" + id }
func agentListKey(ag string) string { return "workers-by-agent/" + ag }

// newJobID is 20 hex digits, the first 12 the creation time in ms: ids
// sort by age.
func newJobID(now time.Time) string {
	var b [10]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}

// validJobID reports whether id looks like one newJobID made: nothing
// else reaches a key or a path.
func validJobID(id string) bool {
	if len(id) != 20 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

var errNoJob = errors.New("no such job")

func loadRecord(ctx context.Context, kv KV, id string) (*Record, error) {
	data, err := kv.KV(ctx, recordKey(id))
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	if data == nil {
		return nil, errNoJob
	}
	r := &Record{}
	if err := json.Unmarshal(data, r); err != nil || r.ID != id {
		return nil, fmt.Errorf("job %s has an unreadable record", id)
	}
	return r, nil
}

func saveRecord(ctx context.Context, kv KV, r *Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := kv.PutKV(ctx, recordKey(r.ID), data); err != nil {
		return fmt.Errorf("save job %s: %w", r.ID, err)
	}
	return nil
}

// listed returns the ids of the agent's jobs, oldest first.
func listed(ctx context.Context, kv KV, agent string) ([]string, error) {
	data, err := kv.KV(ctx, agentListKey(agent))
	if err != nil || data == nil {
		return nil, err
	}
	var ids []string
	if json.Unmarshal(data, &ids) != nil {
		return nil, nil // unreadable: start a new list
	}
	return slices.DeleteFunc(ids, func(id string) bool { return !validJobID(id) }), nil
}

// addListed puts id on the agent's list and returns the ids that fell off
// it (the caller forgets those that are finished).
func addListed(ctx context.Context, kv KV, agent, id string) (dropped []string, err error) {
	ids, err := listed(ctx, kv, agent)
	if err != nil {
		return nil, err
	}
	ids = append(ids, id)
	if len(ids) > maxListed {
		dropped, ids = ids[:len(ids)-maxListed], ids[len(ids)-maxListed:]
	}
	data, _ := json.Marshal(ids)
	return dropped, kv.PutKV(ctx, agentListKey(agent), data)
}

func countKinds(cs []Change) string {
	n := map[ChangeKind]int{}
	for _, c := range cs {
		n[c.Kind]++
	}
	return fmt.Sprintf("%d changed, %d added, %d deleted", n[Changed], n[Added], n[Deleted])
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// checkText refuses an empty or oversized task or feedback.
func checkText(what, s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return what + " is required: say what the worker should do"
	case len(s) > maxTask:
		return fmt.Sprintf("%s is %d bytes, over %d: say it shorter, or put the details in a file of the workspace", what, len(s), maxTask)
	}
	return ""
}
