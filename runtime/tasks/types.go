package tasks

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Status is where a task is in its life.
type Status string

// The statuses, in the order a task moves through them.
const (
	Todo       Status = "todo"
	InProgress Status = "in_progress"
	Done       Status = "done"
	Cancelled  Status = "cancelled"
)

// Statuses lists every status, in board order.
var Statuses = []Status{Todo, InProgress, Done, Cancelled}

// Open reports whether a task with this status still counts against the
// board's bound (todo or in_progress).
func (s Status) Open() bool { return s == Todo || s == InProgress }

// ParseStatus reads a status as people write it ("in progress",
// "In-Progress" and "in_progress" are one).
func ParseStatus(s string) (Status, error) {
	k := strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
	for _, st := range Statuses {
		if k == string(st) {
			return st, nil
		}
	}
	return "", fmt.Errorf("status %q is not one of todo, in_progress, done, cancelled: use one of them", cut(s, 40))
}

// Priority is how urgent a task is.
type Priority string

// The priorities, least urgent first.
const (
	Low      Priority = "low"
	Medium   Priority = "medium"
	High     Priority = "high"
	Critical Priority = "critical"
)

// ParsePriority reads a priority; "" is Medium.
func ParsePriority(s string) (Priority, error) {
	switch p := Priority(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return Medium, nil
	case Low, Medium, High, Critical:
		return p, nil
	}
	return "", fmt.Errorf("priority %q is not one of low, medium, high, critical: use one of them", cut(s, 40))
}

// rank orders priorities for listing: critical first.
func (p Priority) rank() int {
	switch p {
	case Critical:
		return 0
	case High:
		return 1
	case Low:
		return 3
	}
	return 2
}

// Bounds.
const (
	MaxTitle       = 200     // characters
	MaxDescription = 8 << 10 // bytes
	MaxOpen        = 1000    // open (todo, in_progress) tasks per board
	MaxDeps        = 32
	HistoryKept    = 50 // history entries per task; older ones are dropped
	MaxResult      = 8 << 10
	maxWhat        = 500 // bytes of one history entry's text
	maxBoardName   = 64
	maxAgentName   = 64
)

// Who changed a task: "agent:NAME", ByPerson (the HTTP API or the CLI) or
// ByFile (a person's edit of the board's Markdown file).
const (
	ByPerson = "person"
	ByFile   = "file"
)

// ByAgent is the history's name for an agent.
func ByAgent(name string) string { return "agent:" + name }

// Entry is one change in a task's history.
type Entry struct {
	At   time.Time `json:"at"`
	By   string    `json:"by"`
	What string    `json:"what"`
}

// Task is one task of a board, as stored.
type Task struct {
	ID          string   `json:"id"` // T-<n>, numbered per board from 1
	Board       string   `json:"board"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Priority    Priority `json:"priority"`
	Status      Status   `json:"status"`
	Assignee    string   `json:"assignee,omitempty"` // an agent's name
	DependsOn   []string `json:"depends_on,omitempty"`
	// StartAt, when set, is the earliest time the assignee is started on
	// it (see lite's tasks section).
	StartAt *time.Time `json:"start_at,omitempty"`
	// Session is the session an agent was started in to work on it; set
	// once, in the transaction that stores the session's first message,
	// so a task is never started twice.
	Session string    `json:"session,omitempty"`
	Result  string    `json:"result,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Version counts its changes; a change may name the version it was
	// made from (Change.IfVersion) so that a stale one is refused.
	Version int     `json:"version"`
	History []Entry `json:"history,omitempty"`
}

// Num is the number of its id (12 for T-12), 0 for a malformed one.
func (t *Task) Num() int { return idNum(t.ID) }

func idNum(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "T-"))
	if err != nil || !strings.HasPrefix(id, "T-") || n <= 0 {
		return 0
	}
	return n
}

// NormID reads a task id as people type it ("t-3", "3" and "T-3" are one);
// "" when it is none.
func NormID(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(s, "T-") {
		s = "T-" + s
	}
	n := idNum(s)
	if n == 0 || n > 1<<30 {
		return ""
	}
	return "T-" + strconv.Itoa(n)
}

// DefaultBoard is the board of tasks that name none.
const DefaultBoard = "default"

// CheckBoard returns an error sentence unless name is a board name:
// lowercase letters, digits, - and _, at most 64.
func CheckBoard(name string) error {
	if len(name) > maxBoardName || !boardName(name) {
		return fmt.Errorf("board %q is not a board name: use lowercase letters, digits, - and _ (at most %d)", cut(name, 40), maxBoardName)
	}
	return nil
}

// Errors callers branch on; the concrete errors say which task.
var (
	// ErrNotFound: no task has that id on that board.
	ErrNotFound = errors.New("no such task: list them with `agnx-lite task list`")
	// ErrConflict: the change was refused because of the task's state:
	// a move the lifecycle does not allow, a dependency not done, a
	// version that is no longer the task's.
	ErrConflict = errors.New("the task changed: read it again")
	// ErrInvalid: the change itself is malformed (a title too long, an
	// unknown dependency, a cycle).
	ErrInvalid = errors.New("the change is invalid")
)

// Error is a refusal: one sentence, matched by errors.Is to its kind
// (ErrNotFound, ErrConflict or ErrInvalid).
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string        { return e.Msg }
func (e *Error) Is(target error) bool { return target == e.Kind }

func refuse(kind error, format string, a ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// boardName reports whether name is a lowercase letter or digit followed
// by lowercase letters, digits, - and _. (A regexp compiled at package
// init cost every start of the daemon a quarter of a millisecond.)
func boardName(name string) bool {
	for i, c := range []byte(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return name != ""
}

// cut shortens s to n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func asError(err error, target **Error) bool { return errors.As(err, target) }
