package bwrap

import (
	"bufio"
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Interrupt reaches the command and what it started, not bwrap: the
// command ends as it chooses (its trap runs, its exit code is its own).
func TestProcess_Interrupt(t *testing.T) {
	r, ws := sandbox(t)
	for _, trust := range []bool{false, true} {
		r := *r
		r.Trust = trust
		p, err := r.Start(context.Background(), Policy{Workspace: ws},
			[]string{"/bin/bash", "-c", "trap 'echo child-gone; exit 7' TERM; sleep 60 & echo ready; wait"})
		require.NoError(t, err)
		out := bufio.NewReader(p.Stdout)
		line, err := out.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)
		p.Interrupt(syscall.SIGTERM)
		line, err = out.ReadString('\n')
		require.NoError(t, err, "trust %v", trust)
		assert.Equal(t, "child-gone\n", line, "the trap ran")
		err = p.Wait()
		var code int
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
		assert.Equal(t, 7, code, "the command's own exit code: bwrap was not signalled (trust %v)", trust)
	}
}

func TestDescendants(t *testing.T) {
	kids := descendants(os.Getppid(), 1)
	assert.Contains(t, kids, os.Getpid(), "this test is its parent's child")
	pp, ok := parentOf(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, os.Getppid(), pp)
}
