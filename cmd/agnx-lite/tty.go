package main

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/agnx-lite/agnx-lite/lite/toolset"
)

// stdinIsTerminal reports whether standard input is a terminal someone
// types at, so that init run by a script or a service never waits on a
// prompt.
func (g *globals) stdinIsTerminal() bool { return isTTY(g.stdin) }

// isTTY reports whether w is a file that is a terminal.
func isTTY(w any) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// isTerminal reports whether f is a terminal: one that answers a termios
// request. /dev/null is a character device too, but not one.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progress shows a long operation on standard error: one line rewritten
// in place on a terminal, a plain line per step otherwise (toolset.Progress).
// Standard output keeps the command's result.
func (g *globals) progress() *toolset.Progress {
	if g.quiet {
		return nil
	}
	return toolset.NewProgress(g.stderr, isTTY(g.stderr))
}
