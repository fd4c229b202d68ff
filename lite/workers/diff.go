package workers

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Bounds of the diff: a file over maxDiffFile is named, not diffed, and
// the line matching runs on at most maxDiffCells line pairs (past that
// the changed middle is shown as removed then added).
const (
	maxDiffFile  = 1 << 20
	maxDiffCells = 1 << 20
	diffContext  = 3
	maxNamedCut  = 50
)

// renderDiff is the change set as the supervising agent reads it: a
// unified diff of text files, binary and big files named, deleted files
// named, all within limit bytes (then a marker and the names of the rest).
// Old contents come from the workspace, checked against the copy's base:
// a file changed there meanwhile is named as such.
func renderDiff(ws, staging *os.Root, cs *changeSet, base manifest, limit int) string {
	var b strings.Builder
	for i, c := range cs.changes {
		part := diffOne(ws, staging, c, base)
		if b.Len()+len(part) > limit {
			writeCutMarker(&b, cs.changes[i:], limit)
			break
		}
		b.WriteString(part)
	}
	if len(cs.skipped) > 0 {
		fmt.Fprintf(&b, "Not applied (symlinks and special files are never copied back): %s\n", strings.Join(cs.skipped, ", "))
	}
	return b.String()
}

func writeCutMarker(b *strings.Builder, rest []Change, limit int) {
	fmt.Fprintf(b, "[diff cut at %d KiB; %d more files not shown:", limit>>10, len(rest))
	for i, c := range rest {
		if i == maxNamedCut {
			b.WriteString(" …")
			break
		}
		fmt.Fprintf(b, " %s (%s)", c.Path, c.Kind)
	}
	b.WriteString("]\n")
}

func diffOne(ws, staging *os.Root, c Change, base manifest) string {
	if c.Kind == Deleted {
		return fmt.Sprintf("deleted %s (%d bytes)\n", c.Path, c.Size)
	}
	newText, ok := readText(staging, c.Path)
	if !ok {
		return fmt.Sprintf("binary or large file %s %s (%d bytes)\n", c.Path, c.Kind, c.Size)
	}
	var oldText []byte
	if c.Kind == Changed {
		b := base[c.Path]
		cur, sum, ok := readTextSum(ws, c.Path)
		switch {
		case sum == nil || !bytes.Equal(sum, b.Sum):
			return fmt.Sprintf("changed %s (%d bytes); the workspace's copy changed too since the worker started, so approve will refuse it\n", c.Path, c.Size)
		case !ok:
			return fmt.Sprintf("changed %s (%d bytes), was binary or large\n", c.Path, c.Size)
		}
		oldText = cur
	}
	from := "a/" + c.Path
	if c.Kind == Added {
		from = "/dev/null"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, c.Path)
	writeHunks(&b, splitLines(oldText), splitLines(newText))
	return b.String()
}

// readText reads a text file (UTF-8, no NUL, at most maxDiffFile bytes).
func readText(root *os.Root, p string) ([]byte, bool) {
	data, _, ok := readTextSum(root, p)
	return data, ok
}

// readTextSum reads p and returns its sum, and its content when it is
// text; sum is nil when it cannot be read as a regular file.
func readTextSum(root *os.Root, p string) (data, sum []byte, text bool) {
	sum, err := hashFile(root, p)
	if err != nil {
		return nil, nil, false
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	if err != nil || len(data) > maxDiffFile || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, sum, false
	}
	return data, sum, true
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// edit is one line of a diff: ' ' kept, '-' removed, '+' added.
type edit struct {
	op   byte
	line string
}

// lineEdits matches a against b: the common head and tail, then the
// longest common subsequence of the middle when it is small enough.
func lineEdits(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, middleEdits(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

func middleEdits(a, b []string) []edit {
	var out []edit
	n, m := len(a), len(b)
	if n == 0 || m == 0 || n*m > maxDiffCells {
		for _, l := range a {
			out = append(out, edit{'-', l})
		}
		for _, l := range b {
			out = append(out, edit{'+', l})
		}
		return out
	}
	// lcs[i*(m+1)+j] is the LCS length of a[i:] and b[j:]; with n*m at
	// most 1<<20, min(n, m) is at most 1024 and fits a uint16.
	lcs := make([]uint16, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
			} else {
				lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, edit{' ', a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]:
			out = append(out, edit{'-', a[i]})
			i++
		default:
			out = append(out, edit{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, edit{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, edit{'+', b[j]})
	}
	return out
}

// writeHunks writes the edits of a to b as unified-diff hunks with
// diffContext lines of context.
func writeHunks(w *strings.Builder, a, b []string) {
	es := lineEdits(a, b)
	for start := 0; start < len(es); {
		for start < len(es) && es[start].op == ' ' {
			start++
		}
		if start == len(es) {
			return
		}
		lo := max(0, start-diffContext)
		hi, quiet := start, 0
		for hi < len(es) && quiet <= 2*diffContext {
			if es[hi].op == ' ' {
				quiet++
			} else {
				quiet = 0
			}
			hi++
		}
		hi -= max(0, quiet-diffContext)
		writeHunk(w, es, lo, hi)
		start = hi
	}
}

func writeHunk(w *strings.Builder, es []edit, lo, hi int) {
	aLine, bLine := 1, 1
	for _, e := range es[:lo] {
		if e.op != '+' {
			aLine++
		}
		if e.op != '-' {
			bLine++
		}
	}
	aN, bN := 0, 0
	for _, e := range es[lo:hi] {
		if e.op != '+' {
			aN++
		}
		if e.op != '-' {
			bN++
		}
	}
	if aN == 0 {
		aLine--
	}
	if bN == 0 {
		bLine--
	}
	fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", aLine, aN, bLine, bN)
	for _, e := range es[lo:hi] {
		w.WriteByte(e.op)
		w.WriteString(e.line)
		if !strings.HasSuffix(e.line, "\n") {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
