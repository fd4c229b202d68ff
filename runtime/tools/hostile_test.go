package tools

import (
	"context"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocated runs f and returns how many bytes it allocated in all.
func allocated(f func()) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	f()
	goruntime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func run(t *testing.T, tool runtime.Tool, args string) runtime.Result {
	t.Helper()
	res, err := tool.Run(context.Background(), []byte(args))
	require.NoError(t, err)
	return res
}

// The reproduction of issue 11, finding 5: a 10 MB file, replace_all and
// a 5,000-character new_string asked for ~50 GB and killed the daemon.
func TestEditFile_HugeReplaceAll(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("a", 10_000_000)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "mid.txt"), []byte(strings.Repeat("a", 1<<20)), 0o644))
	tool := &EditFile{Workspace: ws}
	args := func(p string) string {
		return `{"path":"` + p + `","old_string":"a","new_string":"` + strings.Repeat("b", 5000) + `","replace_all":true}`
	}
	var res runtime.Result
	start := time.Now()
	n := allocated(func() { res = run(t, tool, args("big.txt")) })
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "larger than the 4 MiB edit_file handles")
	t.Logf("edit_file, 10 MB file: %d bytes allocated in %v", n, time.Since(start))
	assert.Less(t, n, uint64(1<<20), "a file over the cap is refused on its size, unread")
	assert.Less(t, time.Since(start), 5*time.Second)

	// Under the cap to read, far over it once replaced: refused from the
	// count of matches, before the result is built.
	n = allocated(func() { res = run(t, tool, args("mid.txt")) })
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "would make mid.txt 5000 MiB")
	t.Logf("edit_file, 1 MiB file to 5 GB: %d bytes allocated", n)
	assert.Less(t, n, uint64(64<<20))
	data, err := os.ReadFile(filepath.Join(ws, "mid.txt"))
	require.NoError(t, err)
	assert.Equal(t, 1<<20, len(data), "the file is left as it was")
}

func TestEditFile_SparseHuge(t *testing.T) {
	ws := t.TempDir()
	f, err := os.Create(filepath.Join(ws, "sparse"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(200<<20))
	require.NoError(t, f.Close())
	var res runtime.Result
	n := allocated(func() { res = run(t, &EditFile{Workspace: ws}, `{"path":"sparse","old_string":"x","new_string":"y"}`) })
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "change it with bash")
	assert.Less(t, n, uint64(1<<20))
}

// read_file streams: a 200 MB sparse file costs one buffer, and a line
// far past the first 256 KiB is reached by offset.
func TestReadFile_HugeFiles(t *testing.T) {
	ws := t.TempDir()
	f, err := os.Create(filepath.Join(ws, "sparse"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(200<<20))
	require.NoError(t, f.Close())
	tool := &ReadFile{Workspace: ws}
	var res runtime.Result
	n := allocated(func() { res = run(t, tool, `{"path":"sparse"}`) })
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "binary file")
	t.Logf("read_file, 200 MB sparse file: %d bytes allocated", n)
	assert.Less(t, n, uint64(4<<20))

	var b strings.Builder
	for i := 1; i <= 400_000; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n") // ~5 MB
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "lines.txt"), []byte(b.String()), 0o644))
	n = allocated(func() { res = run(t, tool, `{"path":"lines.txt","offset":399999,"limit":1}`) })
	assert.Equal(t, "line 399999\n", res.Content)
	t.Logf("read_file, offset 399999 of a 5 MB file: %d bytes allocated", n)
	assert.Less(t, n, uint64(4<<20))
	res = run(t, tool, `{"path":"lines.txt","offset":400001}`)
	assert.Equal(t, "[the file has only 400000 lines]", res.Content)

	res = run(t, tool, `{"path":"lines.txt","offset":10}`)
	assert.LessOrEqual(t, len(res.Content), maxReadBytes+200)
	require.True(t, strings.Contains(res.Content, "read further with offset="), "a window cut at the cap says where to go on")
	next := res.Content[strings.LastIndex(res.Content, "offset=")+len("offset="):]
	next = strings.TrimSuffix(next, " ...]")
	res = run(t, tool, `{"path":"lines.txt","offset":`+next+`,"limit":1}`)
	assert.Equal(t, "line "+next+"\n", res.Content, "the note names the next line to read")
}

func TestGrep_HugeLine(t *testing.T) {
	ws := t.TempDir()
	f, err := os.Create(filepath.Join(ws, "huge.txt"))
	require.NoError(t, err)
	chunk := []byte(strings.Repeat("x", 1<<20))
	_, err = f.WriteString("needle at the start ")
	require.NoError(t, err)
	for range 100 {
		_, err = f.Write(chunk)
		require.NoError(t, err)
	}
	_, err = f.WriteString(" needle unseen past 64 KiB\nsecond needle line\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	var res runtime.Result
	n := allocated(func() { res = run(t, &Grep{Workspace: ws}, `{"pattern":"needle"}`) })
	require.False(t, res.IsError, res.Content)
	lines := strings.Split(res.Content, "\n")
	require.Len(t, lines, 2, res.Content[:min(len(res.Content), 500)])
	assert.True(t, strings.HasPrefix(lines[0], "huge.txt:1: needle at the start xxx"))
	assert.True(t, strings.HasSuffix(lines[0], "…"))
	assert.Equal(t, "huge.txt:2: second needle line", lines[1])
	t.Logf("grep, 100 MB line: %d bytes allocated", n)
	assert.Less(t, n, uint64(8<<20))
}

func TestListDir_ManyEntries(t *testing.T) {
	ws := t.TempDir()
	for i := range 1500 {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "f"+strconv.Itoa(10000+i)), nil, 0o644))
	}
	res := run(t, &ListDir{Workspace: ws}, `{}`)
	lines := strings.Split(res.Content, "\n")
	require.Len(t, lines, maxListEntries+1)
	assert.Equal(t, "f10000 (0 bytes)", lines[0])
	assert.Equal(t, "f10499 (0 bytes)", lines[maxListEntries-1])
	assert.Equal(t, "[... 1000 more entries not shown ...]", lines[maxListEntries])
}

// finish fails the test if f has not returned within a generous bound: a
// file tool that opens a FIFO blocks for ever, which is what is tested.
func finish(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// unblockFIFO opens the FIFO both ways, which releases any open of it
// stuck waiting for the other end (the old code's failure, so that a
// failing test does not hang the whole run).
func unblockFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
}

func TestFileTools_RefuseSpecialFiles(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "d"), 0o755))
	fifo := filepath.Join(ws, "d", "p")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	unblockFIFO(t, fifo)
	l, err := net.Listen("unix", filepath.Join(ws, "d", "s"))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(ws, "d", "zero")))
	special := []string{"d/p", "d/s", "d/zero"}
	if err := syscall.Mknod(filepath.Join(ws, "d", "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		special = append(special, "d/null") // a character device in the workspace: we run as root
	}
	for _, p := range special {
		for _, tc := range []struct {
			tool runtime.Tool
			args string
		}{
			{&ReadFile{Workspace: ws}, `{"path":"` + p + `"}`},
			{&EditFile{Workspace: ws}, `{"path":"` + p + `","old_string":"a","new_string":"b"}`},
			{&WriteFile{Workspace: ws}, `{"path":"` + p + `","content":"x"}`},
			{&WriteFile{Workspace: ws}, `{"path":"` + p + `","content":"x","append":true}`},
			{&ListDir{Workspace: ws}, `{"path":"` + p + `"}`},
			{&Grep{Workspace: ws}, `{"pattern":"x","path":"` + p + `"}`},
		} {
			var res runtime.Result
			finish(t, tc.tool.Spec().Name+" "+p, func() { res = run(t, tc.tool, tc.args) })
			assert.True(t, res.IsError, "%s %s: %s", tc.tool.Spec().Name, p, res.Content)
			want := "not a regular file|not a directory"
			if p == "d/zero" {
				want = "outside the workspace"
			}
			assert.Regexp(t, want, res.Content, "%s %s", tc.tool.Spec().Name, p)
		}
	}
	var res runtime.Result
	finish(t, "grep over a folder with a FIFO", func() { res = run(t, &Grep{Workspace: ws}, `{"pattern":"x"}`) })
	assert.Equal(t, "no matches for x", res.Content)
	finish(t, "glob", func() { res = run(t, &Glob{Workspace: ws}, `{"pattern":"**"}`) })
	assert.Contains(t, res.Content, "d/p")
	finish(t, "list_dir", func() { res = run(t, &ListDir{Workspace: ws}, `{"path":"d"}`) })
	assert.Contains(t, res.Content, "p (not a regular file)")
}

// A regular file swapped for a FIFO between a check and the open must not
// block: the check is made on the opened descriptor.
func TestReadFile_FIFOSwapRace(t *testing.T) {
	ws := t.TempDir()
	target := filepath.Join(ws, "target")
	unblockFIFO(t, target)
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		tmp := target + ".tmp"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Remove(tmp)
			if i%2 == 0 {
				_ = syscall.Mkfifo(tmp, 0o644)
			} else {
				_ = os.WriteFile(tmp, []byte("regular"), 0o644)
			}
			_ = os.Rename(tmp, target)
		}
	}()
	defer func() { close(stop); <-swapped }()
	tools := []runtime.Tool{&ReadFile{Workspace: ws}, &EditFile{Workspace: ws}, &Grep{Workspace: ws}}
	regular, refused := 0, 0
	finish(t, "reads under a FIFO swap", func() {
		for i := 0; i < 3000 || regular == 0 || refused == 0; i++ {
			if i > 100_000 {
				return
			}
			tool := tools[i%len(tools)]
			args := `{"path":"target","pattern":"regular","old_string":"regular","new_string":"regular"}`
			switch tool.(type) {
			case *ReadFile:
				args = `{"path":"target"}`
			case *Grep:
				args = `{"path":"target","pattern":"regular"}`
			}
			res := run(t, tool, args)
			switch {
			case strings.Contains(res.Content, "not a regular file"):
				refused++
			case strings.Contains(res.Content, "regular"):
				regular++
			}
		}
	})
	assert.Positive(t, regular)
	assert.Positive(t, refused, "the swap really happened under the reads")
}

// Policies see the path that is opened: ./x, a/../x, /workspace/x and the
// workspace's host path all name x.
func TestSubject_NormalisedForPolicies(t *testing.T) {
	ws := t.TempDir()
	p, err := agents.LoadPolicy()
	require.NoError(t, err)
	rule, err := agents.ParseRule("read_file:secret*")
	require.NoError(t, err)
	p.Deny = append(p.Deny, rule)
	for _, path := range []string{"secret.txt", "./secret.txt", "sub/../secret.txt", ".//secret.txt",
		"/workspace/secret.txt", ws + "/secret.txt", " secret.txt", "/secret.txt", "a/b/../../secret.txt"} {
		subject := (&ReadFile{Workspace: ws}).Subject([]byte(`{"path":"` + path + `"}`))
		assert.Equal(t, "secret.txt", subject, path)
		d, _ := p.Decide("read_file", subject)
		assert.Equal(t, agents.Deny, d, path)
	}
	assert.Equal(t, "workspacex/a", cleanPath(ws, "/workspacex/a"))
	assert.Equal(t, "../x", cleanPath(ws, "../x"), "left for os.Root to refuse")
	assert.Equal(t, ".", cleanPath(ws, ""))
	assert.Equal(t, "a", (&WriteFile{Workspace: ws}).Subject([]byte(`{"path":"./a"}`)))
	assert.Equal(t, "a", (&EditFile{Workspace: ws}).Subject([]byte(`{"path":"a/."}`)))
	assert.Equal(t, "a", (&ListDir{Workspace: ws}).Subject([]byte(`{"path":"a/"}`)))
}
