package tasks

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParseBoard: any file parses or fails with a line inside it, never
// panics; what parses renders back to a file that parses to the same
// tasks.
func FuzzParseBoard(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.md")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("## Todo\n- x\n  agent: a\n\n  d\n"))
	f.Add([]byte("<!--\n## Done\n-->\n## In progress\n* T-3 y\n\tdesc\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		items, err := ParseBoard(text)
		if err != nil {
			le, ok := err.(*LineError)
			require.True(t, ok, "%T", err)
			require.GreaterOrEqual(t, le.Line, 1)
			return
		}
		var tasks []*Task
		now := time.Unix(0, 0)
		for i, it := range items {
			id := it.ID
			if id == "" {
				id = "T-" + strconv.Itoa(100000+i)
			}
			task := &Task{ID: id, Title: it.Title, Priority: it.Priority, Status: it.Status, Assignee: it.Assignee,
				DependsOn: it.DependsOn, Description: it.Description, Created: now}
			if checkFields(task) != nil {
				return // the store refuses it: never rendered
			}
			tasks = append(tasks, task)
		}
		again, err := ParseBoard(Render("b", tasks))
		require.NoError(t, err)
		require.Len(t, again, len(tasks))
		byID := map[string]Item{}
		for _, it := range again {
			byID[it.ID] = it
		}
		for _, task := range tasks {
			it := byID[task.ID]
			require.Equal(t, task.Title, it.Title)
			require.Equal(t, task.Status, it.Status)
			require.Equal(t, task.Priority, it.Priority)
			require.Equal(t, task.Assignee, it.Assignee)
			require.Equal(t, len(task.DependsOn), len(it.DependsOn))
			require.Equal(t, task.Description, it.Description)
		}
	})
}

// FuzzCheckBoard: CheckBoard accepts exactly the names of the pattern it
// documents, ^[a-z0-9][a-z0-9_-]*$ of at most maxBoardName bytes.
func FuzzCheckBoard(f *testing.F) {
	for _, s := range []string{"", "default", "a", "-a", "_a", "a-b_c9", "A", "a b", "é", strings.Repeat("a", maxBoardName+1)} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	f.Fuzz(func(t *testing.T, name string) {
		want := len(name) <= maxBoardName && re.MatchString(name)
		err := CheckBoard(name)
		require.Equal(t, want, err == nil, "%q: %v", name, err)
	})
}
