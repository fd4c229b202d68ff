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
	"syscall"
	"testing"
	"testing/synctest"
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

// sent counts the datagrams equal to msg sent so far, without waiting:
// inside a synctest bubble, once every goroutine is blocked (synctest.Wait),
// everything sent is queued on the socket. Any other message fails the test.
func (f *fakeSystemd) sent(msg string) int {
	f.t.Helper()
	raw, err := f.conn.SyscallConn()
	require.NoError(f.t, err)
	n := 0
	buf := make([]byte, 4096)
	for {
		var got int
		var rerr error
		require.NoError(f.t, raw.Read(func(fd uintptr) bool {
			got, _, rerr = syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT)
			return true // never wait for more
		}))
		if errors.Is(rerr, syscall.EAGAIN) {
			return n
		}
		require.NoError(f.t, rerr)
		require.Equal(f.t, msg, string(buf[:got]))
		n++
	}
}

// after lets the bubble's clock run for d and counts the datagrams equal
// to msg sent meanwhile. It reads every 80 ms of fake time, as systemd
// reads at once: a socket queues only net.unix.max_dgram_qlen (10)
// datagrams, and a sender blocked on a full one stops the clock.
func (f *fakeSystemd) after(d time.Duration, msg string) int {
	f.t.Helper()
	n := 0
	for d > 0 {
		step := min(d, 80*time.Millisecond)
		time.Sleep(step)
		synctest.Wait()
		n += f.sent(msg)
		d -= step
	}
	return n
}

// The watchdog tests run in a synctest bubble: its clock moves only when
// every goroutine waits, so the intervals below are exact and cost no
// wall time, however loaded the machine.

func TestRunWatchdog_Interval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeSystemd(t)
		var calls atomic.Int32
		runWatchdog(t, 40*time.Millisecond, func(context.Context) error { calls.Add(1); return nil })
		// one at start, then one every 20 ms: at 20, 40, ..., 380 ms
		assert.Equal(t, 20, f.after(390*time.Millisecond, "WATCHDOG=1"), "a keep-alive every interval/2")
		assert.Equal(t, int32(20), calls.Load(), "every keep-alive follows a successful check")
	})
}

func TestRunWatchdog_StuckLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeSystemd(t)
		var calls atomic.Int32
		// A stuck loop never answers: Ping blocks until its deadline.
		runWatchdog(t, 40*time.Millisecond, func(ctx context.Context) error {
			calls.Add(1)
			<-ctx.Done()
			return ctx.Err()
		})
		assert.Zero(t, f.after(250*time.Millisecond, "WATCHDOG=1"), "a stuck loop must not be reported alive")
		assert.Greater(t, calls.Load(), int32(5), "the check is retried every interval/2")
	})
}

func TestRunWatchdog_FailingThenRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeSystemd(t)
		var healthy atomic.Bool
		runWatchdog(t, 40*time.Millisecond, func(context.Context) error {
			if !healthy.Load() {
				return errors.New("loop closed")
			}
			return nil
		})
		assert.Zero(t, f.after(150*time.Millisecond, "WATCHDOG=1"), "no keep-alive while alive fails")
		healthy.Store(true)
		// past the tick at 160 ms
		assert.Equal(t, 1, f.after(20*time.Millisecond, "WATCHDOG=1"), "keep-alives resume once alive succeeds")
	})
}

func TestRunWatchdog_SlowAnswerIsLate(t *testing.T) {
	for _, tc := range []struct {
		answer time.Duration
		want   int
	}{
		// An answer that comes after the deadline (interval/2 = 20 ms) does
		// not count, even if alive ignores its context; one just in time
		// does: at 0, 20, ..., 180 ms.
		{30 * time.Millisecond, 0},
		{19 * time.Millisecond, 10},
	} {
		synctest.Test(t, func(t *testing.T) {
			f := newFakeSystemd(t)
			runWatchdog(t, 40*time.Millisecond, func(context.Context) error { time.Sleep(tc.answer); return nil })
			assert.Equal(t, tc.want, f.after(199*time.Millisecond, "WATCHDOG=1"), "answering after %s", tc.answer)
		})
	}
}

func TestRunWatchdog_StopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		newFakeSystemd(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); RunWatchdog(ctx, time.Hour, func(context.Context) error { return nil }) }()
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("RunWatchdog did not return when its context ended")
		}
	})
}
