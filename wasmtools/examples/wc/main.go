// Command wc is an example WASM tool: it reads {"path": "notes.txt"} on
// stdin, counts that workspace file's lines, words and bytes, and writes
// {"content": "...", "details": {"lines": n, "words": n, "bytes": n}}.
// The file is streamed, so its size does not matter.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o wc.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
)

type args struct {
	Path string `json:"path"`
}

type output struct {
	Content string `json:"content"`
	Details Counts `json:"details"`
}

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fail("arguments must be a JSON object such as {\"path\": \"notes.txt\"}: %v", err)
	}
	if strings.TrimSpace(a.Path) == "" {
		fail("path is required")
	}
	name := path.Clean("/" + strings.TrimPrefix(a.Path, "/workspace/"))
	f, err := os.Open("/workspace" + name)
	if err != nil {
		fail("cannot open %s in the workspace: %v", a.Path, err)
	}
	defer f.Close()
	c, err := Count(f)
	if err != nil {
		fail("cannot read %s: %v", a.Path, err)
	}
	out := output{Details: c,
		Content: fmt.Sprintf("%d lines, %d words, %d bytes in %s", c.Lines, c.Words, c.Bytes, a.Path)}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("write result: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "wc: "+format+"\n", args...)
	os.Exit(1)
}
