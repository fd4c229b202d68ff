package wasmtools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

func benchModes(b *testing.B) []string {
	if compilerSupported() {
		return []string{ModeCompiler, ModeInterpreter}
	}
	return []string{ModeInterpreter}
}

// BenchmarkCompile loads calc (a 3.4 MB Go module) on a new engine: cold
// compiles it, cached finds it in the on-disk cache of an earlier engine.
func BenchmarkCompile(b *testing.B) {
	manifest := example(b, "calc")
	ctx := context.Background()
	load := func(b *testing.B, opts Options) {
		e, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		tool, err := e.Load(ctx, manifest, ToolOptions{})
		if err != nil {
			b.Fatal(err)
		}
		_ = tool.Close(ctx)
		_ = e.Close(ctx)
	}
	for _, mode := range benchModes(b) {
		b.Run(mode+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				load(b, Options{Mode: mode, CacheDir: b.TempDir()})
			}
		})
	}
	if !compilerSupported() {
		return
	}
	b.Run("compiler/cached", func(b *testing.B) {
		dir := b.TempDir()
		load(b, Options{Mode: ModeCompiler, CacheDir: dir})
		b.ReportAllocs()
		for b.Loop() {
			load(b, Options{Mode: ModeCompiler, CacheDir: dir})
		}
	})
}

// BenchmarkRun is the cost of one call: instantiate, run, collect. tiny is
// a hand-written module that writes "ok" (the engine's own overhead); go is
// calc, whose time is mostly the Go runtime starting up. tiny-ws mounts a
// workspace it does not touch (the mount's own cost); wc-ws counts a small
// file in it (opens and reads through the mount).
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one two\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range benchModes(b) {
		e, err := New(Options{Mode: mode})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close(ctx)
		for _, m := range []struct{ name, manifest, args string }{
			{"tiny", toolDir(b, "name: ok\ndescription: ok\n", okWasm()), "{}"},
			{"tiny-ws", toolDir(b, "name: ok\ndescription: ok\nworkspace: ro\n", okWasm()), "{}"},
			{"go", example(b, "calc"), `{"expression": "1 + 2 * 3"}`},
			{"wc-ws", example(b, "wc"), `{"path": "notes.txt"}`},
		} {
			tool, err := e.Load(ctx, m.manifest, ToolOptions{Workspace: ws})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(mode+"/"+m.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if res, err := tool.Run(ctx, []byte(m.args)); err != nil || res.IsError {
						b.Fatal(err, res.Content)
					}
				}
			})
		}
	}
}

// BenchmarkLoadMemory loads ten copies of calc that differ by a custom
// section, so that none is shared, and reports what each costs: on the Go
// heap, and in RSS (compiled code is mmapped outside the heap).
func BenchmarkLoadMemory(b *testing.B) {
	bin, err := os.ReadFile(exampleModule(b, "calc"))
	if err != nil {
		b.Fatal(err)
	}
	const copies = 10
	ctx := context.Background()
	for _, mode := range benchModes(b) {
		b.Run(mode, func(b *testing.B) {
			paths := make([]string, copies)
			for i := range paths {
				paths[i] = toolDir(b, "name: calc\ndescription: calc\n", withCustom(bin, fmt.Sprint(i)))
			}
			var heap, rss float64
			for b.Loop() {
				e, _ := New(Options{Mode: mode})
				h0, r0 := memNow()
				for _, p := range paths {
					if _, err := e.Load(ctx, p, ToolOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				h1, r1 := memNow()
				heap += float64(h1-h0) / copies
				rss += float64(r1-r0) / copies
				_ = e.Close(ctx)
			}
			b.ReportMetric(heap/float64(b.N)/(1<<20), "heap-MiB/module")
			b.ReportMetric(rss/float64(b.N)/(1<<20), "rss-MiB/module")
		})
	}
}

// memNow returns the live Go heap and the process's RSS (0 where
// /proc/self/statm does not exist).
func memNow() (heap, rss int64) {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	if data, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			rss = pages * int64(os.Getpagesize())
		}
	}
	return int64(ms.HeapInuse), rss
}

// BenchmarkWorkspaceOpen opens, reads and closes a file three folders deep
// in the workspace, as a tool's open does: through wazero's own directory
// mount (which follows any symlink, the mount used before) and through
// rootFS; mount is the cost each call pays to open and close the root.
func BenchmarkWorkspaceOpen(b *testing.B) {
	ws := b.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "a", "b", "c"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a", "b", "c", "f.txt"), []byte("hello"), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := openRootFS(ws, true)
	if err != nil {
		b.Fatal(err)
	}
	defer root.root.Close()
	buf := make([]byte, 64)
	for _, c := range []struct {
		name string
		fs   experimentalsys.FS
	}{{"dirfs", sysfs.DirFS(ws)}, {"root", root}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, errno := c.fs.OpenFile("a/b/c/f.txt", experimentalsys.O_RDONLY, 0)
				if errno != 0 {
					b.Fatal(errno)
				}
				if n, _ := f.Read(buf); n != 5 {
					b.Fatal("short read")
				}
				f.Close()
			}
		})
	}
	b.Run("mount", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, err := openRootFS(ws, true)
			if err != nil {
				b.Fatal(err)
			}
			_ = r.root.Close()
		}
	})
}
