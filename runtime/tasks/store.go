package tasks

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agnx-lite/agnx-lite/storage"
)

// Tasks live in agnx.db's index space, scope "tasks": kind "t" holds each
// task's JSON under board, a zero byte and its big-endian number (so a
// prefix scan reads one board in id order); kind "n" a board's last
// number; kind "f" what the board's Markdown file was last written from
// (filesync.go).
const (
	scope     = "tasks"
	kindTask  = "t"
	kindNext  = "n"
	kindFile  = "f"
	maxClosed = 500 // done and cancelled tasks a board keeps; older ones no open task needs are dropped
)

func taskKey(board string, n int) []byte {
	k := append([]byte(board), 0)
	return binary.BigEndian.AppendUint32(k, uint32(n))
}

// DB is where tasks are kept: the runtime loop (View reads, Commit joins
// its group commit) or, in a process without one, FromStore.
type DB interface {
	View(func(*storage.Tx) error) error
	Commit(context.Context, func(*storage.Tx) error) error
}

// FromStore adapts a storage.Store to DB: Commit is one Update of its own.
func FromStore(st *storage.Store) DB { return storeDB{st} }

type storeDB struct{ st *storage.Store }

func (d storeDB) View(fn func(*storage.Tx) error) error { return d.st.View(fn) }

func (d storeDB) Commit(ctx context.Context, fn func(*storage.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.st.Update(fn)
}

// Options configure New.
type Options struct {
	DB DB
	// Dir is where the boards' Markdown files are (<data dir>/tasks);
	// "" keeps no files.
	Dir    string
	Now    func() time.Time
	Logger *slog.Logger
	// Changed is told the board after every committed change (lite starts
	// the agents of tasks that became ready). It must not block.
	Changed func(board string)
}

// Store keeps the task boards. Its methods may be called from any
// goroutine but not from the runtime loop's (they wait for its commits).
type Store struct {
	o  Options
	mu sync.Mutex // serializes every change: each is read, checked and committed whole
	// fmu guards files alone, never across I/O, so a board's file can be
	// read outside mu (readBoardFile); taken inside mu, never around it.
	fmu sync.Mutex
	// files is what was last seen of each board's file (filesync.go). A
	// memo is replaced, never changed.
	files map[string]*fileMemo
}

// New returns a store over o.DB.
func New(o Options) *Store {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Store{o: o, files: map[string]*fileMemo{}}
}

// board is one board's tasks as read in one transaction.
type board struct {
	name  string
	tasks []*Task // in id order
	byID  map[string]*Task
	next  int // the last number given
	base  fileBase
}

func (b *board) open() int {
	n := 0
	for _, t := range b.tasks {
		if t.Status.Open() {
			n++
		}
	}
	return n
}

func loadBoard(tx *storage.Tx, name string) (*board, error) {
	b := &board{name: name, byID: map[string]*Task{}}
	err := tx.IndexScan(scope, kindTask, append([]byte(name), 0), func(_, v []byte) error {
		t := new(Task)
		if json.Unmarshal(v, t) != nil || t.ID == "" {
			return nil // one damaged record must not hide the others
		}
		b.tasks = append(b.tasks, t)
		b.byID[t.ID] = t
		b.next = max(b.next, t.Num())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read board %s: %w", name, err)
	}
	if v, err := tx.IndexGet(scope, kindNext, []byte(name)); err != nil {
		return nil, err
	} else if len(v) == 4 {
		b.next = max(b.next, int(binary.BigEndian.Uint32(v)))
	}
	if v, err := tx.IndexGet(scope, kindFile, []byte(name)); err != nil {
		return nil, err
	} else if v != nil {
		_ = json.Unmarshal(v, &b.base) // a damaged base only makes the next file edit a two-way one
	}
	return b, nil
}

func (s *Store) read(name string) (*board, error) {
	var b *board
	err := s.o.DB.View(func(tx *storage.Tx) (err error) {
		b, err = loadBoard(tx, name)
		return err
	})
	return b, err
}

// Boards returns the names of the boards that have tasks.
func (s *Store) Boards() ([]string, error) {
	var out []string
	err := s.o.DB.View(func(tx *storage.Tx) error {
		return tx.IndexScan(scope, kindNext, nil, func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}

// edit is one change of a board: fn changes b's tasks in place and
// returns those it changed (new ones included); nothing is stored when it
// returns an error.
type edit struct {
	board string
	fn    func(b *board) ([]*Task, error)
	// applied is the hash of the person's file the change comes from.
	applied string
	// force writes the file even over a person's mistake (the fixed
	// file, a removed one).
	force bool
	// commit, when set, stores the change instead of DB.Commit: it must
	// run the given function in its transaction (Begin).
	commit func(func(*storage.Tx) error) error
}

// change applies e under the lock, after picking up the person's edits
// of the board's file, and writes the file again.
func (s *Store) change(ctx context.Context, e edit) ([]*Task, error) {
	if err := CheckBoard(e.board); err != nil {
		return nil, refuse(ErrInvalid, "%s", err.Error())
	}
	f := s.readBoardFile(e.board) // outside the lock: a slow file holds up no other board
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.syncLocked(ctx, e.board, f) // a bad file is reported (logged) there; the store stays the truth
	changed, err := s.apply(ctx, e)
	if err == nil && s.o.Changed != nil {
		s.o.Changed(e.board)
	}
	return changed, err
}

func (s *Store) apply(ctx context.Context, e edit) ([]*Task, error) {
	b, err := s.read(e.board)
	if err != nil {
		return nil, err
	}
	changed, err := e.fn(b)
	if err != nil || (len(changed) == 0 && !e.force) {
		return changed, err // nothing to store
	}
	for _, t := range changed {
		if err := checkFields(t); err != nil {
			return nil, err
		}
		if err := checkDeps(t, b.byID); err != nil {
			return nil, err
		}
		if len(t.History) > HistoryKept {
			t.History = slices.Clone(t.History[len(t.History)-HistoryKept:])
		}
	}
	if b.open() > MaxOpen {
		return nil, refuse(ErrInvalid, "board %s has %d open tasks, the most it keeps: finish or cancel some first", b.name, MaxOpen)
	}
	dropped := prune(b)
	puts := make(map[string][]byte, len(changed))
	for _, t := range changed {
		v, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
		}
		puts[t.ID] = v
	}
	file := s.prepareFile(b, e.applied, e.force)
	next := binary.BigEndian.AppendUint32(nil, uint32(b.next))
	fn := func(tx *storage.Tx) error {
		for id, v := range puts {
			if err := tx.IndexPut(scope, kindTask, taskKey(b.name, idNum(id)), v); err != nil {
				return err
			}
		}
		for _, n := range dropped {
			if err := tx.IndexDelete(scope, kindTask, taskKey(b.name, n)); err != nil {
				return err
			}
		}
		if file.base != nil {
			if err := tx.IndexPut(scope, kindFile, []byte(b.name), file.base); err != nil {
				return err
			}
		}
		return tx.IndexPut(scope, kindNext, []byte(b.name), next)
	}
	if e.commit != nil {
		err = e.commit(fn)
	} else {
		err = s.o.DB.Commit(ctx, fn)
	}
	if err != nil {
		return nil, err
	}
	s.writeFile(b.name, file)
	return changed, nil
}

// prune drops the oldest closed tasks past maxClosed that no open task
// depends on, and returns their numbers.
func prune(b *board) []int {
	var closed []*Task
	needed := map[string]bool{}
	for _, t := range b.tasks {
		if t.Status.Open() {
			for _, d := range t.DependsOn {
				needed[d] = true
			}
		} else {
			closed = append(closed, t)
		}
	}
	if len(closed) <= maxClosed {
		return nil
	}
	slices.SortFunc(closed, func(x, y *Task) int { return x.Updated.Compare(y.Updated) })
	var out []int
	for _, t := range closed[:len(closed)-maxClosed] {
		if !needed[t.ID] {
			out = append(out, t.Num())
			delete(b.byID, t.ID)
		}
	}
	b.tasks = slices.DeleteFunc(b.tasks, func(t *Task) bool { return b.byID[t.ID] != t })
	return out
}

// path is the board's Markdown file.
func (s *Store) path(boardName string) string { return filepath.Join(s.o.Dir, boardName+".md") }
