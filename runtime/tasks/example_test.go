package tasks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agnx-lite/agnx-lite/runtime/tasks"
	"github.com/agnx-lite/agnx-lite/storage"
)

func Example() {
	dir, _ := os.MkdirTemp("", "tasks")
	defer os.RemoveAll(dir)
	st, _ := storage.Open(filepath.Join(dir, "agnx.db"), &storage.Options{NoSync: true})
	defer st.Close()
	s := tasks.New(tasks.Options{DB: tasks.FromStore(st), Dir: filepath.Join(dir, "tasks")})
	ctx := context.Background()

	s.Add(ctx, tasks.ByPerson, tasks.Task{Title: "collect the data", Assignee: "researcher"})
	s.Add(ctx, tasks.ByPerson, tasks.Task{Title: "write the report", DependsOn: []string{"T-1"}})
	start := tasks.InProgress
	_, err := s.Update(ctx, "", "T-2", tasks.ByAgent("writer"), tasks.Change{Status: &start})
	fmt.Println(err)
	t, _ := s.Update(ctx, "", "T-1", tasks.ByAgent("researcher"), tasks.Change{Status: &start})
	fmt.Println(t.ID, t.Status, t.History[1].By, t.History[1].What)
	// Output:
	// T-2 depends on T-1, which is todo: finish T-1 first (or remove it from the dependencies)
	// T-1 in_progress agent:researcher todo → in_progress
}
