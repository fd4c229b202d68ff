// Package golden keeps generated files honest: a test renders a file
// from the code (the pages of docs/reference) and Check compares it with
// the one in the repository, or rewrites it when the test runs with
// -update. It is imported by tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated files from the code instead of checking them")

// Check compares page with the file at path, or rewrites the file with
// -update. A stale page fails with one sentence: the line where it
// differs and regen, the command that regenerates it.
func Check(t testing.TB, path, page, regen string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatalf("rewrite %s: %v", path, err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the generated page %s (%v): create it with `%s`", path, err, regen)
	}
	if string(old) != page {
		t.Fatalf("%s is stale (from line %d): regenerate it with `%s`, or every reference with `make docs`",
			filepath.Base(path), firstDiffLine(string(old), page), regen)
	}
}

// firstDiffLine is the first line (from 1) where a and b differ.
func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
