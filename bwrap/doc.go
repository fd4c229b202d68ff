// Package bwrap will run commands in bubblewrap: an agent's tool policy
// becomes a bwrap argv with limits, and a probe says whether the sandbox
// works on this machine. It imports the standard library only.
//
// It is empty until the sandboxed tools land (the "tools that are safe on a
// home server" issue); until then agents have no shell tool at all.
package bwrap
