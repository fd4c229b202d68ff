package bwrap

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkRun is the cost of one sandboxed `true`, without and with
// the network (the helper's start), against the same command through
// trust mode (the init, no namespaces) and a bare exec.
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
	b.Run("bwrap-network", func(b *testing.B) { // plus pasta's start
		if st := Probe(ctx); !st.Usable || st.NetworkProblem != "" {
			b.Skip(st.Problem + st.NetworkProblem)
		}
		r := &Runner{}
		for b.Loop() {
			if _, err := r.Run(ctx, Policy{Workspace: ws, Network: true}, []string{"true"}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bwrap_owner_runas", func(b *testing.B) { // as lite runs it for a root daemon
		if st := Probe(ctx); !st.Usable || os.Geteuid() != 0 {
			b.Skip("takes a usable bwrap and root")
		}
		r := &Runner{Owner: &Owner{Dir: b.TempDir()}}
		defer r.Owner.Close()
		p := Policy{Workspace: ws, RunAs: &User{UID: 65534, GID: 65534}}
		for b.Loop() {
			if _, err := r.Run(ctx, p, []string{"true"}, nil); err != nil {
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
