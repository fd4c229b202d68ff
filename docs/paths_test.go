package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// codePath is a path of the repository's Go code as the manual names it
// in backticks: `lite/chats`, `runtime/loop.go`, `lite/toolset/`.
var codePath = regexp.MustCompile("`((?:lite|runtime|agents|storage|wasmtools|bwrap|cmd|ci|bench)(?:/[A-Za-z0-9_.-]+)*/?)`")

// madeByCommands are files the manual names that a command writes and
// git ignores: make bench's report.
var madeByCommands = map[string]bool{"bench/last.txt": true, "bench/last.md": true}

// The packages and files the manual names exist: a package moved or a
// file renamed takes its mentions along (the architecture page names
// where each part lives, and is worth little when it points at a file
// that is gone).
func TestPaths_Exist(t *testing.T) {
	checked := 0
	for _, f := range markdownFiles(t) {
		if !strings.HasPrefix(f, "docs/") && f != "README.md" {
			continue
		}
		for i, line := range strings.Split(readFile(t, f), "\n") {
			for _, m := range codePath.FindAllStringSubmatch(line, -1) {
				p := strings.TrimSuffix(m[1], "/")
				if strings.ContainsAny(p, "*{") || madeByCommands[p] {
					continue // a pattern, or a file a command writes
				}
				checked++
				_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
				assert.NoError(t, err, "%s:%s names %s, which does not exist: point it at where that code lives now", f, strconv.Itoa(i+1), p)
			}
		}
	}
	assert.Greater(t, checked, 50, "the manual names where code lives: so few paths means the scan is broken")
}
