package tasks

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/storage"
)

// rig is a store on a fresh database with a board folder and a clock
// that moves a second per read.
type rig struct {
	*Store
	st  *storage.Store
	dir string
	now time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	r := &rig{st: st, dir: filepath.Join(dir, "tasks"), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	r.Store = New(Options{DB: FromStore(st), Dir: r.dir, Now: func() time.Time { return r.now }})
	return r
}

// reopen is a new Store (a restarted process) on the same database.
func (r *rig) reopen() *Store {
	return New(Options{DB: FromStore(r.st), Dir: r.dir, Now: func() time.Time { return r.now }})
}

func (r *rig) add(t *testing.T, title string, deps ...string) Task {
	t.Helper()
	task, err := r.Add(context.Background(), ByPerson, Task{Title: title, DependsOn: deps})
	require.NoError(t, err)
	return task
}

func (r *rig) move(id string, to Status) (Task, error) {
	return r.Update(context.Background(), DefaultBoard, id, ByPerson, Change{Status: &to})
}

func (r *rig) file(t *testing.T, board string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, board+".md"))
	require.NoError(t, err)
	return string(b)
}

// edit writes the board's file as a person would, a second later.
func (r *rig) edit(t *testing.T, board, text string) {
	t.Helper()
	p := filepath.Join(r.dir, board+".md")
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	later := st.ModTime().Add(time.Second)
	require.NoError(t, os.Chtimes(p, later, later))
}
