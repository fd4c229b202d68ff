package bwrap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBwrap writes a script that stands in for bwrap and returns its path.
func fakeBwrap(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bwrap")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	return path
}

// A probe the machine was too busy to answer says so, and is marked Slow
// so that the daemon probes again instead of keeping a refusal that says
// nothing about the sandbox.
func TestProbe_SlowIsNotARefusal(t *testing.T) {
	old := probeTimeout
	probeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { probeTimeout = old })
	st := (&Runner{Bwrap: fakeBwrap(t, "exec sleep 60")}).Probe(context.Background())
	assert.False(t, st.Usable)
	assert.True(t, st.Slow)
	assert.Contains(t, st.Problem, "bubblewrap did not run a trivial command within 300ms")
	assert.Contains(t, st.Problem, "tried again at the next tool call")
}

// A bwrap that fails and says nothing gets a sentence that says what to
// run, never "cannot create its sandbox: " and nothing after it.
func TestProbe_SilentFailureSaysWhatToRun(t *testing.T) {
	st := (&Runner{Bwrap: fakeBwrap(t, "exit 1")}).Probe(context.Background())
	assert.False(t, st.Usable)
	assert.False(t, st.Slow)
	assert.Equal(t, `bubblewrap cannot create its sandbox and said nothing: run "bwrap --ro-bind / / true" to see why`, st.Problem)
}
