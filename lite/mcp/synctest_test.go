package mcp

import (
	"context"
	goruntime "runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdleStop_Synctest: a server no call used for its idle time is
// stopped (no goroutine of the manager waits meanwhile: a timer), and the
// next call starts it again; in-process servers, fake time.
func TestIdleStop_Synctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewManager(Options{IdleTimeout: time.Minute})
		inProcess(t, m)
		srv := Server{Name: "s", Command: "unused", IdleTimeout: 10 * time.Minute}
		tools, warns := m.Tools(context.Background(), "a", "", []Server{srv})
		require.Empty(t, warns)
		require.True(t, statOf(m, "s").Running, "listing started it")
		require.Positive(t, clientGoroutines(), "the running session's goroutines are counted")

		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		assert.True(t, statOf(m, "s").Running, "not idle for long enough yet")
		_, err := run(t, find(t, tools, "s__echo"), `{"text":"x"}`)
		require.NoError(t, err)
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		assert.True(t, statOf(m, "s").Running, "the call restarted the idle time")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.False(t, statOf(m, "s").Running, "stopped once idle")
		assert.Zero(t, clientGoroutines(), "nothing of the stopped server is left running")
		assert.Equal(t, uint64(0), statOf(m, "s").Restarts)

		_, err = run(t, find(t, tools, "s__echo"), `{"text":"x"}`)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), statOf(m, "s").Restarts, "the next call started it again")
		require.NoError(t, m.Close(context.Background()))
	})
}

// clientGoroutines counts the goroutines of MCP sessions: those running
// the SDK's code or a server's or connection's method. The process's
// other goroutines (the runtime's, other packages' tests) are not
// counted, so the figure does not depend on the machine.
func clientGoroutines() int {
	buf := make([]byte, 1<<20)
	n := goruntime.Stack(buf, true)
	count := 0
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "modelcontextprotocol/go-sdk") ||
			strings.Contains(g, "lite/mcp.(*server)") || strings.Contains(g, "lite/mcp.(*conn)") {
			count++
		}
	}
	return count
}
