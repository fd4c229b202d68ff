package main

import (
	"fmt"
	goruntime "runtime"
)

func runVersion(g *globals, args []string) error {
	if err := parse(g.flags("version"), args); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "agnx-lite %s (%s, %s/%s)\n", version, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	return nil
}
