// Command calc is an example WASM tool: it reads {"expression": "..."} on
// stdin and writes {"content": "<value>", "details": {"value": <value>}} on
// stdout. A bad expression is reported on stderr with exit code 1, which
// agnx-lite turns into an error result the model can read.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o calc.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type args struct {
	Expression string `json:"expression"`
}

type output struct {
	Content string `json:"content"`
	Details struct {
		Value float64 `json:"value"`
	} `json:"details"`
}

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fail("arguments must be a JSON object such as {\"expression\": \"1 + 2\"}: %v", err)
	}
	v, err := Eval(a.Expression)
	if err != nil {
		fail("%v", err)
	}
	var out output
	out.Content = Format(v)
	out.Details.Value = v
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("write result: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "calc: "+format+"\n", args...)
	os.Exit(1)
}
