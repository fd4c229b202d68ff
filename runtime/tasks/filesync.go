package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxFile bounds the board file Sync reads.
const maxFile = 16 << 20

// fileBase is what a board's file was last written from, kept in agnx.db
// so a person's edit is merged field by field: a field the person changed
// (its file value differs from the base) takes the file's value; one they
// did not keeps the store's, even when the store changed it meanwhile.
type fileBase struct {
	Hash string `json:"hash"` // sha256 of the file as written
	// Prev is the file on disk before (a write that failed leaves it):
	// seen again, it is only stale, not edited.
	Prev string `json:"prev,omitempty"`
	// Applied is the person's file the last change came from: seen
	// again (the rewrite did not happen), it is not applied twice.
	Applied string              `json:"applied,omitempty"`
	Fields  map[string][]uint64 `json:"fields,omitempty"`
}

// fileMemo is what this process last saw of a board's file.
type fileMemo struct {
	mod  time.Time
	size int64
	disk string // the hash of the file on disk, when known
	err  error  // the mistake in it, until it changes
}

// FileError is a person's edit of a board's file that was not applied.
type FileError struct {
	Board string
	Line  int
	Msg   string
}

// Error reads tasks/<board>.md:LINE: what is wrong.
func (e *FileError) Error() string {
	return fmt.Sprintf("tasks/%s.md:%d: %s", e.Board, e.Line, e.Msg)
}

func hashOf(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func fieldHashes(title string, p Priority, st Status, assignee string, deps []string, desc string) []uint64 {
	out := make([]uint64, 0, 6)
	for _, f := range []string{title, string(p), string(st), assignee, strings.Join(deps, ","), desc} {
		h := fnv.New64a()
		_, _ = io.WriteString(h, f)
		out = append(out, h.Sum64())
	}
	return out
}

// pendingFile is a board file to write after its change commits.
type pendingFile struct {
	text []byte
	base []byte // the fileBase to store with the change; nil: none
}

// prepareFile renders b and its base, unless the board has no files or
// its file holds a person's mistake, which stays as they wrote it.
func (s *Store) prepareFile(b *board, applied string, force bool) pendingFile {
	if s.o.Dir == "" {
		return pendingFile{}
	}
	m := s.memo(b.name)
	if m != nil && m.err != nil && !force {
		return pendingFile{}
	}
	text := Render(b.name, b.tasks)
	nb := fileBase{Hash: hashOf(text), Prev: b.base.Hash, Applied: applied, Fields: map[string][]uint64{}}
	if m != nil && m.disk != "" {
		nb.Prev = m.disk
	}
	for _, t := range b.tasks {
		nb.Fields[t.ID] = fieldHashes(t.Title, t.Priority, t.Status, t.Assignee, t.DependsOn, t.Description)
	}
	enc, err := json.Marshal(nb)
	if err != nil {
		return pendingFile{}
	}
	return pendingFile{text: text, base: enc}
}

// writeFile replaces the board's file (temp file and rename, 0600).
func (s *Store) writeFile(name string, f pendingFile) {
	if f.text == nil {
		return
	}
	path := s.path(name)
	err := writeAtomic(path, f.text)
	if err != nil {
		s.o.Logger.Warn("cannot write the task board's file; it is written again on the next change", "board", name, "err", err)
		return
	}
	m := &fileMemo{disk: hashOf(f.text)}
	if st, err := os.Lstat(path); err == nil {
		m.mod, m.size = st.ModTime(), st.Size()
	}
	s.setMemo(name, m)
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".board-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Sync picks up a person's edit of the board's file: when it changed
// since it was last seen (one lstat when it did not), its differences are
// applied as changes by ByFile. A file with a mistake is not applied: its
// *FileError comes back (again on every call until the file changes) and
// is logged once; so does a file that is not a regular one (a link, a
// named pipe, a device), which is never opened in a way that could block.
// The file is read before the store's lock is taken (readBoardFile), so
// a slow one holds up no other board.
func (s *Store) Sync(ctx context.Context, boardName string) error {
	if s.o.Dir == "" || CheckBoard(boardName) != nil {
		return nil
	}
	f := s.readBoardFile(boardName)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncLocked(ctx, boardName, f)
}

// FileErr returns the mistake last found in the board's file, or nil.
func (s *Store) FileErr(boardName string) error {
	if m := s.memo(boardName); m != nil {
		return m.err
	}
	return nil
}

// syncLocked applies f, the board's file as readBoardFile found it, under
// the store's lock.
func (s *Store) syncLocked(ctx context.Context, name string, f boardFile) error {
	switch {
	case s.o.Dir == "":
		return nil
	case f.err != nil:
		return f.err
	case f.st == nil:
		return s.rewrite(ctx, name) // removed (or never written): the store writes it again
	case f.problem != "":
		return s.bad(name, f.st, 1, f.problem)
	}
	st := f.st
	m := s.memo(name)
	if m != nil && m.mod.Equal(st.ModTime()) && m.size == st.Size() {
		return m.err
	}
	if !f.read {
		return nil // seen unchanged, then changed by another call meanwhile: that call applied it
	}
	text := f.text
	b, err := s.read(name)
	if err != nil {
		return err
	}
	h := hashOf(text)
	switch h {
	case b.base.Hash:
		s.setMemo(name, &fileMemo{mod: st.ModTime(), size: st.Size(), disk: h})
		return nil
	case b.base.Prev, b.base.Applied:
		s.setMemo(name, &fileMemo{mod: st.ModTime(), size: st.Size(), disk: h})
		return s.rewrite(ctx, name) // stale, not edited: a write that did not happen
	}
	items, err := ParseBoard(text)
	var le *LineError
	if errors.As(err, &le) {
		return s.bad(name, st, le.Line, le.Msg)
	}
	_, err = s.apply(ctx, edit{board: name, applied: h, force: true, fn: func(b *board) ([]*Task, error) { return b.merge(items, s.o.Now()) }})
	if errors.As(err, &le) {
		return s.bad(name, st, le.Line, le.Msg)
	}
	if err != nil {
		return err
	}
	s.o.Logger.Info("a person's edit of the task board's file is applied", "board", name)
	if s.o.Changed != nil {
		s.o.Changed(name)
	}
	return nil
}

// rewrite writes the board's file from the store, with no change.
func (s *Store) rewrite(ctx context.Context, name string) error {
	_, err := s.apply(ctx, edit{board: name, force: true, fn: func(b *board) ([]*Task, error) {
		if len(b.tasks) == 0 && b.next == 0 {
			return nil, errNoBoard
		}
		return nil, nil
	}})
	if errors.Is(err, errNoBoard) {
		return nil
	}
	return err
}

var errNoBoard = errors.New("no such board")

func (s *Store) bad(name string, st fs.FileInfo, line int, msg string) error {
	fe := &FileError{Board: name, Line: line, Msg: msg}
	if m := s.memo(name); m == nil || m.err == nil || m.err.Error() != fe.Error() {
		s.o.Logger.Warn("a person's edit of the task board's file is not applied: fix the line", "board", name, "err", fe.Error())
	}
	s.setMemo(name, &fileMemo{mod: st.ModTime(), size: st.Size(), err: fe})
	return fe
}

// SyncAll syncs every board the store has and every board file a person
// made in Dir, and returns the mistakes found.
func (s *Store) SyncAll(ctx context.Context) []error {
	names, err := s.Boards()
	if err != nil {
		return []error{err}
	}
	if s.o.Dir != "" {
		files, _ := filepath.Glob(filepath.Join(s.o.Dir, "*.md"))
		for _, f := range files {
			if n := strings.TrimSuffix(filepath.Base(f), ".md"); CheckBoard(n) == nil && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	var errs []error
	for _, n := range names {
		if err := s.Sync(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
