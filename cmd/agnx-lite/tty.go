package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// stdinIsTTY reports whether standard input is a terminal someone types
// at: unlike isTerminal, /dev/null (a character device too) is not one,
// so that init run by a script or a service never waits on a prompt.
func (g *globals) stdinIsTTY() bool {
	f, ok := g.stdin.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
