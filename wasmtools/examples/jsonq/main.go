// Command jsonq is an example WASM tool: it reads {"json": "...", "path":
// "a.b[0]"} or {"file": "data.json", "path": ...} on stdin and writes the
// selected value: strings as they are, anything else as JSON. Files are read
// from /workspace, which agnx-lite mounts read-only (workspace: ro).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o jsonq.wasm .
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
)

type args struct {
	JSON *string `json:"json"`
	File string  `json:"file"`
	Path string  `json:"path"`
}

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fail("arguments must be a JSON object such as {\"json\": \"{...}\", \"path\": \"a.b\"}: %v", err)
	}
	doc, err := document(a)
	if err != nil {
		fail("%v", err)
	}
	v, err := Query(doc, a.Path)
	if err != nil {
		fail("%v", err)
	}
	if s, ok := v.(string); ok {
		fmt.Println(s)
		return
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	fmt.Println(string(out))
}

// document decodes the inline JSON or the workspace file.
func document(a args) (any, error) {
	var data []byte
	switch {
	case a.JSON != nil:
		data = []byte(*a.JSON)
	case a.File != "":
		name := path.Clean("/" + strings.TrimPrefix(a.File, "/workspace/"))
		var err error
		if data, err = os.ReadFile("/workspace" + name); err != nil {
			return nil, fmt.Errorf("cannot read %s from the workspace: %v", a.File, err)
		}
	default:
		return nil, fmt.Errorf("give the document as \"json\" or as \"file\"")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the document is not valid JSON: %v", err)
	}
	return doc, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "jsonq: "+format+"\n", args...)
	os.Exit(1)
}
