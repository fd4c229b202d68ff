package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agnx-lite/agnx-lite/storage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Lifecycle(t *testing.T) {
	r := newRig(t)
	a := r.add(t, "collect data")
	assert.Equal(t, "T-1", a.ID)
	assert.Equal(t, Todo, a.Status)
	assert.Equal(t, Medium, a.Priority)

	_, err := r.move("T-1", Done)
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "move it to in_progress first")

	for _, st := range []Status{InProgress, Done, Todo, Cancelled} {
		got, err := r.move("T-1", st)
		require.NoError(t, err, st)
		assert.Equal(t, st, got.Status)
	}
	got, err := r.Get(context.Background(), "", "t-1")
	require.NoError(t, err)
	assert.Equal(t, 5, got.Version)
	require.Len(t, got.History, 5)
	assert.Equal(t, "created", got.History[0].What)
	assert.Equal(t, "todo → in_progress", got.History[1].What)
	assert.Equal(t, ByPerson, got.History[4].By)

	_, err = r.Get(context.Background(), "", "T-9")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestStore_Dependencies(t *testing.T) {
	r := newRig(t)
	r.add(t, "one")
	r.add(t, "two", "T-1")
	ctx := context.Background()

	_, err := r.move("T-2", InProgress)
	require.ErrorIs(t, err, ErrConflict, "a task does not start before its dependency is done")
	assert.Equal(t, "T-2 depends on T-1, which is todo: finish T-1 first (or remove it from the dependencies)", err.Error())

	deps := []string{"T-2"}
	_, err = r.Update(ctx, "", "T-1", ByPerson, Change{DependsOn: &deps})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "cycle (T-1 → T-2 → T-1)")

	_, err = r.Add(ctx, ByPerson, Task{Title: "three", DependsOn: []string{"T-7"}})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "T-7, which this board does not have")

	self := []string{"3"}
	r.add(t, "three")
	_, err = r.Update(ctx, "", "T-3", ByPerson, Change{DependsOn: &self})
	require.ErrorIs(t, err, ErrInvalid)

	_, err = r.move("T-1", InProgress)
	require.NoError(t, err)
	_, err = r.move("T-1", Done)
	require.NoError(t, err)
	got, err := r.move("T-2", InProgress)
	require.NoError(t, err)
	assert.Equal(t, InProgress, got.Status)

	// A cancelled dependency blocks until removed.
	r.add(t, "four")
	r.add(t, "five", "T-4")
	_, err = r.move("T-4", Cancelled)
	require.NoError(t, err)
	_, err = r.move("T-5", InProgress)
	require.ErrorIs(t, err, ErrConflict)
	none := []string{}
	_, err = r.Update(ctx, "", "T-5", ByPerson, Change{DependsOn: &none, Status: ptr(InProgress)})
	require.NoError(t, err)
}

func TestStore_Bounds(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	_, err := r.Add(ctx, ByPerson, Task{Title: strings.Repeat("x", MaxTitle+1)})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = r.Add(ctx, ByPerson, Task{Title: "x", Description: strings.Repeat("d", MaxDescription+1)})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = r.Add(ctx, ByPerson, Task{Title: " "})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = r.Add(ctx, ByPerson, Task{Title: "x", Board: "Bad Board"})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = r.Add(ctx, ByPerson, Task{Title: "x", Priority: "urgent"})
	require.ErrorIs(t, err, ErrInvalid)
	deps := make([]string, MaxDeps+1)
	for i := range deps {
		deps[i] = fmt.Sprint(i + 1)
	}
	_, err = r.Add(ctx, ByPerson, Task{Title: "x", DependsOn: deps})
	require.ErrorIs(t, err, ErrInvalid)

	task := r.add(t, "chatty")
	for i := range HistoryKept + 10 {
		task, err = r.Update(ctx, "", task.ID, ByPerson, Change{Comment: fmt.Sprint("note ", i)})
		require.NoError(t, err)
	}
	require.Len(t, task.History, HistoryKept)
	assert.Equal(t, fmt.Sprint("note: note ", HistoryKept+9), task.History[HistoryKept-1].What)
}

func TestStore_OpenBound(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	// Seeded in one transaction: a thousand Adds, each reading the
	// board, take a minute under -race.
	require.NoError(t, r.st.Update(func(tx *storage.Tx) error {
		for i := 1; i <= MaxOpen; i++ {
			v, _ := json.Marshal(Task{ID: fmt.Sprint("T-", i), Board: "big", Title: "t", Priority: Medium, Status: Todo, Version: 1})
			if err := tx.IndexPut(scope, kindTask, taskKey("big", i), v); err != nil {
				return err
			}
		}
		return nil
	}))
	_, err := r.Add(ctx, ByPerson, Task{Title: "one too many", Board: "big"})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "1000 open tasks")
	_, err = r.move("T-1", Cancelled)
	require.Error(t, err, "T-1 is on board big, not default")
	_, err = r.Update(ctx, "big", "T-1", ByPerson, Change{Status: ptr(Cancelled)})
	require.NoError(t, err)
	_, err = r.Add(ctx, ByPerson, Task{Title: "now it fits", Board: "big"})
	require.NoError(t, err)
}

// Two agents move the same task at once: exactly one wins, the other
// is told why, and the history has the winner's move only.
func TestStore_ConcurrentMoves(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for range 20 {
		task := r.add(t, "contended")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = r.Update(ctx, "", task.ID, ByAgent(fmt.Sprint("a", i)), Change{Status: ptr(InProgress)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				require.ErrorIs(t, err, ErrConflict)
				assert.Contains(t, err.Error(), "already in_progress")
			}
		}
		assert.Equal(t, 1, won)
		got, err := r.Get(ctx, "", task.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, got.Version)
		assert.Len(t, got.History, 2)
	}
}

// Concurrent changes of different fields are all kept; with versions,
// the stale one is refused.
func TestStore_ConcurrentNoLostUpdate(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	task := r.add(t, "shared")
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			_, err := r.Update(ctx, "", task.ID, ByAgent(fmt.Sprint("a", i)), Change{Comment: fmt.Sprint("c", i)})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, err := r.Get(ctx, "", task.ID)
	require.NoError(t, err)
	assert.Equal(t, 11, got.Version)
	assert.Len(t, got.History, 11)

	errs := make([]error, 2)
	for i, who := range []string{"x", "y"} {
		wg.Go(func() {
			_, errs[i] = r.Update(ctx, "", task.ID, ByAgent(who), Change{Assignee: &who, IfVersion: got.Version})
		})
	}
	wg.Wait()
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one assignment wins: %v", errs)
	for _, err := range errs {
		if err != nil {
			require.ErrorIs(t, err, ErrConflict)
			assert.Contains(t, err.Error(), "changed since you read it")
		}
	}
}

func TestStore_BeginFinish(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	agent := "worker"
	task, err := r.Add(ctx, ByPerson, Task{Title: "do it", Assignee: agent})
	require.NoError(t, err)
	due, _, err := r.Due(ctx, r.now)
	require.NoError(t, err)
	require.Len(t, due, 1)

	commit := func(fn func(*storage.Tx) error) error { return r.st.Update(fn) }
	got, err := r.Begin(ctx, "default", task.ID, ByAgent(agent), "s1", commit)
	require.NoError(t, err)
	assert.Equal(t, InProgress, got.Status)
	assert.Equal(t, "s1", got.Session)
	_, err = r.Begin(ctx, "default", task.ID, ByAgent(agent), "s2", commit)
	require.ErrorIs(t, err, ErrConflict, "a task is started once")
	due, _, err = r.reopen().Due(ctx, r.now)
	require.NoError(t, err)
	assert.Empty(t, due, "after a restart too")

	require.NoError(t, r.Finish(ctx, "default", task.ID, "s1", ByAgent(agent), false, "", "failed"))
	got, _ = r.Get(ctx, "", task.ID)
	assert.Equal(t, InProgress, got.Status)
	assert.Equal(t, "note: the turn ended: failed", got.History[len(got.History)-1].What)
	require.NoError(t, r.Finish(ctx, "default", task.ID, "other", ByAgent(agent), true, "nope", ""))
	require.NoError(t, r.Finish(ctx, "default", task.ID, "s1", ByAgent(agent), true, "the answer", ""))
	got, _ = r.Get(ctx, "", task.ID)
	assert.Equal(t, Done, got.Status)
	assert.Equal(t, "the answer", got.Result)
}
