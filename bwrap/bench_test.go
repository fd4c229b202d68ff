package bwrap

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRun is the cost of one sandboxed `true` against the same
// command through trust mode (the init, no namespaces) and a bare exec.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	b.Run("bwrap", func(b *testing.B) {
		if st := Probe(ctx); !st.Usable {
			b.Skip(st.Problem)
		}
		r := &Runner{}
		for b.Loop() {
			if _, err := r.Run(ctx, Policy{Workspace: ws}, []string{"true"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("trust", func(b *testing.B) {
		r := &Runner{Trust: true}
		for b.Loop() {
			if _, err := r.Run(ctx, Policy{Workspace: ws}, []string{"true"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
