// Command testtool is a WASM module for wasmtools' tests: {"mode": ...}
// selects a behaviour, from well-behaved to hostile.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

type args struct {
	Mode string `json:"mode"`
	File string `json:"file"`
	MB   int    `json:"mb"`
	To   string `json:"to"`
	N    int    `json:"n"`
}

// calls proves that every call gets a fresh instance: it is always 1.
var calls int

var sink [][]byte

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fmt.Fprintln(os.Stderr, "bad args:", err)
		os.Exit(2)
	}
	calls++
	switch a.Mode {
	case "state":
		fmt.Println("calls:", calls)
	case "json":
		fmt.Println(`{"content": "hello from json", "details": {"answer": 42}}`)
	case "env":
		fmt.Println(strings.Join(os.Environ(), "\n"))
	case "args":
		fmt.Println(strings.Join(os.Args, " "))
	case "fail":
		fmt.Println("partial output")
		fmt.Fprintln(os.Stderr, "something went wrong")
		os.Exit(3)
	case "loop":
		for calls > 0 {
			calls++
		}
	case "oom":
		// One write per 64 KiB page: the cap is on memory.grow, and an
		// interpreter under emulation takes minutes to fill 24 MiB byte by
		// byte.
		for {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 64 << 10 {
				b[i] = 1
			}
			sink = append(sink, b)
		}
	case "flood":
		buf := []byte(strings.Repeat("x", 1<<16-1) + "\n")
		for range a.MB * 16 {
			if _, err := os.Stdout.Write(buf); err != nil {
				os.Exit(4)
			}
		}
	case "read":
		data, err := os.ReadFile("/workspace/" + a.File)
		if err != nil {
			fmt.Fprintln(os.Stderr, "read:", err)
			os.Exit(1)
		}
		os.Stdout.Write(data)
	case "write":
		if err := os.WriteFile("/workspace/"+a.File, []byte("written"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", a.File)
	case "list", "mkdir", "rename", "remove", "hammer":
		files(a)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", a.Mode)
		os.Exit(2)
	}
}

// files runs the workspace modes other than read and write.
func files(a args) {
	p := "/workspace/" + a.File
	var err error
	switch a.Mode {
	case "list":
		var entries []os.DirEntry
		if entries, err = os.ReadDir(p); err == nil {
			for _, e := range entries {
				fmt.Println(e.Name())
			}
		}
	case "mkdir":
		err = os.Mkdir(p, 0o755)
	case "rename":
		err = os.Rename(p, "/workspace/"+a.To)
	case "remove":
		err = os.Remove(p)
	case "hammer":
		hammer(p, a.N)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, a.Mode+":", err)
		os.Exit(1)
	}
}

// hammer reads p n times and prints every distinct content it saw, for
// the race test: a read that ever sees what lies outside the workspace
// shows it here.
func hammer(p string, n int) {
	seen := map[string]bool{}
	failed := 0
	for range n {
		data, err := os.ReadFile(p)
		if err != nil {
			failed++
			continue
		}
		seen[string(data)] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Printf("read %q, failed %d\n", keys, failed)
}
