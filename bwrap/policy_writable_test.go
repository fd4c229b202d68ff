package bwrap

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Writable folders are bound read-write at their own path, after /tmp's
// tmpfs (so one under /tmp is not hidden), with traversable parents when
// the command runs as another user.
func TestArgs_Writable(t *testing.T) {
	a := Args(Policy{Workspace: "/w", Writable: []string{"/tmp/home/x"}, RunAs: &User{UID: 65534, GID: 65534}},
		"/init", []string{"true"})
	bind := slices.Index(a, "/tmp/home/x")
	tmpfs := slices.Index(a, "--tmpfs")
	if assert.Positive(t, bind) && assert.Positive(t, tmpfs) {
		assert.Equal(t, []string{"--bind", "/tmp/home/x", "/tmp/home/x"}, a[bind-1:bind+2])
		assert.Greater(t, bind, tmpfs)
		assert.Contains(t, a[tmpfs:bind], "/tmp/home")
	}
}
