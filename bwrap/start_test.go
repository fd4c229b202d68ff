package bwrap

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/ci/testenv"
)

// talk checks a started `sh -c 'echo ready; echo oops >&2; cat'`: a line
// out, a line echoed back, the end of input ending it.
func talk(t *testing.T, p *Process) {
	t.Helper()
	out := bufio.NewReader(p.Stdout)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ready\n", line)
	_, err = io.WriteString(p.Stdin, "ping\n")
	require.NoError(t, err)
	line, err = out.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ping\n", line)
	require.NoError(t, p.Stdin.Close())
	assert.NoError(t, p.Wait(), "cat ends at the end of its input")
	assert.Contains(t, string(p.Stderr()), "oops")
	assert.NoError(t, p.Stdout.Close())
}

var talker = []string{"/bin/sh", "-c", "echo ready; echo oops >&2; cat"}

func TestStart_Pipes(t *testing.T) {
	r, ws := sandbox(t)
	// A deadline of a nanosecond would kill a Run at once: Start has none.
	p, err := r.Start(context.Background(), Policy{Workspace: ws, Limits: Limits{Timeout: time.Nanosecond}}, talker)
	require.NoError(t, err)
	assert.Positive(t, p.Pid)
	talk(t, p)
}

func TestStart_LimitsAndKill(t *testing.T) {
	r, ws := sandbox(t)
	p, err := r.Start(context.Background(), Policy{Workspace: ws, Limits: Limits{MaxProcs: 50}},
		[]string{"/bin/sh", "-c", "cat /proc/self/limits; pwd; exec sleep 1000"})
	require.NoError(t, err)
	out := bufio.NewReader(p.Stdout)
	var b strings.Builder
	for !strings.Contains(b.String(), "/workspace\n") {
		line, err := out.ReadString('\n')
		require.NoError(t, err)
		b.WriteString(line)
	}
	assert.Regexp(t, `Max processes\s+50\s+50`, b.String(), "the init set the limits")
	p.Kill()
	require.Error(t, p.Wait())
	_, err = out.ReadString('\n')
	assert.ErrorIs(t, err, io.EOF, "the whole sandbox ended with bwrap")
	p.Kill() // reaped already: nothing happens
}

func TestStart_WithOwner(t *testing.T) {
	r, ws := sandbox(t)
	r.Owner = &Owner{Dir: t.TempDir()}
	defer r.Owner.Close()
	p, err := r.Start(context.Background(), Policy{Workspace: ws}, talker)
	require.NoError(t, err)
	talk(t, p)
}

func TestStart_Trust(t *testing.T) {
	testenv.SkipIfNoReexec(t, "trust mode runs the re-executed test binary as the init")
	ws := t.TempDir()
	r := &Runner{Trust: true}
	p, err := r.Start(context.Background(), Policy{Workspace: ws}, talker)
	require.NoError(t, err)
	talk(t, p)

	// Kill ends the process group: the command and what it started.
	p, err = r.Start(context.Background(), Policy{Workspace: ws},
		[]string{"/bin/sh", "-c", "sleep 1000 & echo $!; wait"})
	require.NoError(t, err)
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	p.Kill()
	require.Error(t, p.Wait())
	require.Eventually(t, func() bool {
		return syscall.Kill(child, 0) != nil || zombie(child)
	}, 10*time.Second, 10*time.Millisecond, "the command's child was killed with it")
}

// zombie tells a process that has ended but is not reaped yet.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z")
}

func TestStart_Unavailable(t *testing.T) {
	_, err := (&Runner{Bwrap: "/nonexistent/bwrap"}).Start(context.Background(), Policy{}, []string{"true"})
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestTail(t *testing.T) {
	tl := &tail{max: 8}
	_, _ = tl.Write([]byte("abc"))
	_, _ = tl.Write([]byte("defgh"))
	assert.Equal(t, "abcdefgh", string(tl.bytes()))
	_, _ = tl.Write([]byte("ij"))
	assert.Equal(t, "cdefghij", string(tl.bytes()))
	_, _ = tl.Write([]byte("0123456789"))
	assert.Equal(t, "23456789", string(tl.bytes()))
}

func TestStart_Network(t *testing.T) {
	r, ws := sandbox(t)
	if _, err := lookNet(""); err != nil {
		t.Skip(err.Error())
	}
	p, err := r.Start(context.Background(), Policy{Workspace: ws, Network: true},
		[]string{"/bin/sh", "-c", "tr '\\n' ' ' < /proc/net/dev; echo; exec cat"})
	require.NoError(t, err)
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	require.NoError(t, err)
	assert.Regexp(t, `tap0|eth0|ens|enp`, line, "the helper connected the sandbox's own network namespace")
	require.NoError(t, p.Stdin.Close())
	assert.NoError(t, p.Wait())
}
