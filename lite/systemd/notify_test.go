package systemd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSystemd listens where $NOTIFY_SOCKET points, as systemd does.
type fakeSystemd struct {
	t    *testing.T
	conn *net.UnixConn
}

func listenNotify(t *testing.T, name string) *fakeSystemd {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return &fakeSystemd{t: t, conn: conn}
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	return listenNotify(t, filepath.Join(t.TempDir(), "notify"))
}

// next returns the next datagram, or "" when none came within wait.
func (f *fakeSystemd) next(wait time.Duration) string {
	f.t.Helper()
	require.NoError(f.t, f.conn.SetReadDeadline(time.Now().Add(wait)))
	buf := make([]byte, 4096)
	n, err := f.conn.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ""
	}
	require.NoError(f.t, err)
	return string(buf[:n])
}

// count counts the datagrams equal to msg that arrive until the deadline;
// any other message fails the test.
func (f *fakeSystemd) count(msg string, until time.Time) int {
	f.t.Helper()
	n := 0
	for {
		left := time.Until(until)
		if left <= 0 {
			return n
		}
		got := f.next(left)
		if got == "" {
			return n
		}
		require.Equal(f.t, msg, got)
		n++
	}
}

func TestNotify_Messages(t *testing.T) {
	f := newFakeSystemd(t)
	for _, tc := range []struct {
		send func() error
		want string
	}{
		{Ready, "READY=1"},
		{func() error { return Status("serving on 127.0.0.1:8080, 3 agents") }, "STATUS=serving on 127.0.0.1:8080, 3 agents"},
		{func() error { return Status("two\nlines") }, "STATUS=two lines"},
		{Watchdog, "WATCHDOG=1"},
		{Stopping, "STOPPING=1"},
		{func() error { return Notify("READY=1\nSTATUS=up") }, "READY=1\nSTATUS=up"},
	} {
		require.NoError(t, tc.send())
		assert.Equal(t, tc.want, f.next(time.Second))
	}
}

func TestNotify_AbstractSocket(t *testing.T) {
	f := listenNotify(t, fmt.Sprintf("@agnx-lite-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	require.NoError(t, Ready())
	assert.Equal(t, "READY=1", f.next(time.Second))
}

func TestNotify_NoSocket(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	assert.NoError(t, Ready(), "without systemd, notifications are no-ops")

	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone"))
	assert.Error(t, Ready(), "a socket that is not there is an error")

	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	assert.Error(t, Ready())
}

func TestWatchdogInterval(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		usec, pid string
		want      time.Duration
		ok        bool
	}{
		{"30000000", "", 30 * time.Second, true},
		{"30000000", me, 30 * time.Second, true},
		{"30000000", "1", 0, false}, // meant for another process
		{"", "", 0, false},
		{"0", "", 0, false},
		{"-5", "", 0, false},
		{"soon", "", 0, false},
	} {
		t.Setenv("WATCHDOG_USEC", tc.usec)
		t.Setenv("WATCHDOG_PID", tc.pid)
		got, ok := WatchdogInterval()
		assert.Equal(t, tc.ok, ok, "%+v", tc)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
}

// runWatchdog starts RunWatchdog and stops it at the end of the test.
func runWatchdog(t *testing.T, interval time.Duration, alive func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); RunWatchdog(ctx, interval, alive) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestRunWatchdog_Interval(t *testing.T) {
	f := newFakeSystemd(t)
	const interval = 40 * time.Millisecond // keep-alives every 20 ms
	var calls atomic.Int32
	runWatchdog(t, interval, func(context.Context) error { calls.Add(1); return nil })
	start := time.Now()
	n := f.count("WATCHDOG=1", start.Add(400*time.Millisecond))
	// 400 ms / 20 ms = 20 ticks, plus the one at start. Fewer on a slow
	// machine is fine; many fewer means a keep-alive is late.
	assert.GreaterOrEqual(t, n, 8, "too few keep-alives: systemd would kill a healthy daemon")
	assert.LessOrEqual(t, n, 22, "keep-alives faster than interval/2")
	assert.GreaterOrEqual(t, int(calls.Load()), n, "every keep-alive follows a successful check")
}

func TestRunWatchdog_StuckLoop(t *testing.T) {
	f := newFakeSystemd(t)
	// A stuck loop never answers: Ping blocks until its deadline.
	runWatchdog(t, 40*time.Millisecond, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	assert.Zero(t, f.count("WATCHDOG=1", time.Now().Add(250*time.Millisecond)), "a stuck loop must not be reported alive")
}

func TestRunWatchdog_FailingThenRecovered(t *testing.T) {
	f := newFakeSystemd(t)
	var healthy atomic.Bool
	runWatchdog(t, 40*time.Millisecond, func(context.Context) error {
		if !healthy.Load() {
			return errors.New("loop closed")
		}
		return nil
	})
	assert.Zero(t, f.count("WATCHDOG=1", time.Now().Add(150*time.Millisecond)), "no keep-alive while alive fails")
	healthy.Store(true)
	assert.Equal(t, "WATCHDOG=1", f.next(time.Second), "keep-alives resume once alive succeeds")
}

func TestRunWatchdog_SlowAnswerIsLate(t *testing.T) {
	f := newFakeSystemd(t)
	// An answer that comes after the deadline does not count, even if
	// alive ignores its context.
	runWatchdog(t, 40*time.Millisecond, func(context.Context) error { time.Sleep(30 * time.Millisecond); return nil })
	assert.Zero(t, f.count("WATCHDOG=1", time.Now().Add(200*time.Millisecond)))
}

func TestRunWatchdog_StopsWithContext(t *testing.T) {
	newFakeSystemd(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); RunWatchdog(ctx, time.Hour, func(context.Context) error { return nil }) }()
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("RunWatchdog did not return when its context ended")
	}
}
