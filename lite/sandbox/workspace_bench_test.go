package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkPrepareWorkspace is the walk every sandboxed or file-writing
// call pays to measure (and, for a root daemon, hand over) the workspace.
func BenchmarkPrepareWorkspace(b *testing.B) {
	for _, files := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(files)+"_files", func(b *testing.B) {
			ws := b.TempDir()
			for i := range files {
				dir := filepath.Join(ws, fmt.Sprintf("d%02d", i%50))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := prepareWorkspace(ws, 1024, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
